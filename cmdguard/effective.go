package cmdguard

import "strings"

// wrapper describes a command that runs another command given after its
// options (and after a fixed number of operands).
type wrapper struct {
	spec     optSpec // options that take a value
	plus     bool    // "+x" is an option too
	dash     bool    // a lone "-" is an option too (env's -i)
	operands int     // operands before the wrapped command (timeout's duration)
}

var envSpec = optSpec{short: "aCSu", long: []string{"--argv0", "--chdir", "--split-string", "--unset"}}

// wrappers run the command that follows their options. Their value-taking
// options matter: "env -u cat rm x" runs rm, not cat.
var wrappers = map[string]wrapper{
	"command":   {},
	"builtin":   {},
	"nohup":     {},
	"setsid":    {},
	"busybox":   {},
	"pkexec":    {spec: optSpec{long: []string{"--user"}}},
	"fakeroot":  {spec: optSpec{short: "sil", long: []string{"--lib", "--faked"}}},
	"eatmydata": {},
	"unbuffer":  {},
	"torsocks":  {spec: optSpec{short: "uaPp"}},
	"env":       {spec: envSpec, dash: true},
	"exec":      {spec: optSpec{short: "a"}},
	"nice":      {spec: optSpec{short: "n", long: []string{"--adjustment"}}},
	"sudo": {spec: optSpec{short: "CDghpRrTtuU", long: []string{"--close-from", "--chdir", "--group",
		"--host", "--prompt", "--chroot", "--role", "--command-timeout", "--type", "--user", "--other-user"}}},
	"doas":    {spec: optSpec{short: "aCu"}},
	"time":    {spec: optSpec{short: "fo", long: []string{"--format", "--output"}}, plus: true},
	"timeout": {spec: optSpec{short: "sk", long: []string{"--signal", "--kill-after"}}, operands: 1},
	"xargs": {spec: optSpec{short: "adEILnPs", optional: "eil", long: []string{"--arg-file", "--delimiter",
		"--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}}},
	"stdbuf":  {spec: optSpec{short: "ioe", long: []string{"--input", "--output", "--error"}}},
	"ionice":  {spec: optSpec{short: "cnpPu", long: []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}}},
	"chroot":  {spec: optSpec{long: []string{"--userspec", "--groups"}}, operands: 1},
	"runuser": {spec: optSpec{short: "ugG", long: []string{"--user", "--group", "--supp-group"}}},
	"unshare": {spec: optSpec{short: "SGRw", long: []string{"--setuid", "--setgid", "--root", "--wd", "--propagation"}}},
	"strace":  {spec: optSpec{short: "abeEIoOpPsSuUX"}},
	"taskset": {operands: 1},
	"chrt":    {operands: 1},
	"flock":   {spec: optSpec{short: "wEc", long: []string{"--timeout", "--conflict-exit-code", "--command"}}, operands: 1},
}

// shellKeywords start compound commands; the command follows them.
var shellKeywords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "do": true, "while": true,
	"until": true, "!": true, "{": true, "}": true, "fi": true, "done": true, "esac": true,
	"coproc": true,
}

// skipWrapper returns the index of the word after wrapper w's options and
// operands (and NAME=VALUE words, which env and sudo accept), starting at
// words[i], the first word after the wrapper's name; opts are the options
// it parsed.
func skipWrapper(words []string, i int, w wrapper) (int, []opt) {
	var opts []opt
	for i < len(words) {
		arg := words[i]
		if arg == "--" {
			i++
			break
		}
		if (w.plus && len(arg) > 1 && arg[0] == '+') || (w.dash && arg == "-") {
			i++
			continue
		}
		if !isOption(arg) {
			break
		}
		var o []opt
		o, i = parseOne(words, i, w.spec)
		opts = append(opts, o...)
	}
	for n := 0; n < w.operands && i < len(words); n++ {
		i++
	}
	for i < len(words) && isAssignment(words[i]) {
		i++
	}
	return i, opts
}

// hardlineEffective finds the command a simple command really runs: past
// assignments, compound-command keywords and wrappers (with their
// options). It also returns the scripts env -S/--split-string and flock
// -c would run.
// "command -v/-V" only looks a name up, so it is its own command.
func hardlineEffective(words []string) (int, string, []string) {
	var scripts []string
	i := 0
	for i < len(words) && (isAssignment(words[i]) || shellKeywords[words[i]]) {
		i++
	}
	for i < len(words) {
		// Lowercased: on a case-insensitive file system (macOS) "RM" runs
		// rm, and a block may be stricter than the shell.
		name := strings.ToLower(baseName(words[i]))
		w, ok := wrappers[name]
		if !ok {
			return i, name, scripts
		}
		at := i
		next, opts := skipWrapper(words, i+1, w)
		if name == "command" && has(opts, "-v", "-V") {
			return at, name, scripts
		}
		switch name {
		case "env":
			scripts = append(scripts, values(opts, "-S", "--split-string")...)
		case "flock":
			// flock FILE -c SCRIPT: its options may follow the file.
			scripts = append(scripts, dashCScripts(words[at+1:])...)
		}
		i = next
	}
	return i, "", scripts
}

// effectiveCommand is step 9's effective command: past leading
// assignments and the env, time and command wrappers with their options
// (value-taking ones with their value) and assignments.
func effectiveCommand(words []string) (int, string) {
	i := 0
	for i < len(words) && isAssignment(words[i]) {
		i++
	}
	for i < len(words) {
		name := baseName(words[i])
		switch name {
		case "env", "time", "command":
		default:
			return i, name
		}
		i, _ = skipWrapper(words, i+1, wrappers[name])
	}
	return i, ""
}

func commandName(words []string) string {
	if _, name := effectiveCommand(words); name != "" {
		return name
	}
	return "<empty>"
}

// isBareExecutable reports a command word the shell looks up on PATH
// rather than a path to a file (which could be workspace code).
func isBareExecutable(w string) bool {
	return w != "" && w != "." && w != ".." && !strings.ContainsAny(w, `/\`)
}

// normalizeGrouping drops grouping syntax around a command: leading "(",
// "{", "!" words, a "(" glued to the first word, trailing ")" and "}".
func normalizeGrouping(words []string) []string {
	for len(words) > 0 && (words[0] == "(" || words[0] == "{" || words[0] == "!") {
		words = words[1:]
	}
	if len(words) > 0 {
		if t := strings.TrimLeft(words[0], "("); t != words[0] {
			words = append([]string{t}, words[1:]...)
			if t == "" {
				words = words[1:]
			}
		}
	}
	for len(words) > 0 && (words[len(words)-1] == ")" || words[len(words)-1] == "}") {
		words = words[:len(words)-1]
	}
	if n := len(words); n > 0 {
		if t := strings.TrimRight(words[n-1], ")}"); t != words[n-1] {
			words = append(append([]string(nil), words[:n-1]...), t)
			if t == "" {
				words = words[:n-1]
			}
		}
	}
	return words
}
