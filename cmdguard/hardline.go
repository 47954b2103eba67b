package cmdguard

import (
	"regexp"
	"strings"
)

// Bounds of one candidate's destructive-pattern search. Nested texts
// (substitution bodies, sh -c scripts, eval arguments) are examined up to
// maxDepth levels deep; maxTexts distinct texts and maxBytes bytes in all.
// Past a budget the candidate is not trusted: it is prompted, or blocked if
// a flattened reading of it is destructive.
const (
	maxDepth = 32
	maxTexts = 2048
	maxBytes = 4 << 20
)

// analysis is the state of one candidate's destructive-pattern search. It
// memoises per text, so a command built to repeat the same nested body
// costs its length once, not once per path to it.
type analysis struct {
	memo      map[string]hardline
	texts     int
	bytes     int
	exhausted bool
}

func newAnalysis() *analysis { return &analysis{memo: make(map[string]hardline)} }

// hardlineIn searches text for a destructive command: first inside the
// bodies of its substitutions, then in the text itself.
func (a *analysis) hardlineIn(text string, depth int) hardline {
	if depth > maxDepth || a.exhausted {
		return hardline{}
	}
	if h, ok := a.memo[text]; ok {
		return h
	}
	a.texts++
	a.bytes += len(text)
	if a.texts > maxTexts || a.bytes > maxBytes {
		a.exhausted = true
		return hardline{}
	}
	h := a.search(text, depth)
	a.memo[text] = h
	return h
}

func (a *analysis) search(text string, depth int) hardline {
	for _, p := range scanExpansions(text).payloads {
		if h := a.hardlineIn(p, depth+1); h.found() {
			return h
		}
	}
	if h := textHardline(text); h.found() {
		return h
	}
	return a.commandsHardline(lexCommands(text), depth)
}

// flattenedHardline reads cmd with every quote, backtick and parenthesis
// turned into a space, without recursion: a last look at a command too
// nested to analyse properly.
func (a *analysis) flattenedHardline(cmd string) hardline {
	flat := strings.Map(func(r rune) rune {
		switch r {
		case '\'', '"', '`', '(', ')', '$':
			return ' '
		}
		return r
	}, cmd)
	if h := textHardline(flat); h.found() {
		return h
	}
	b := &analysis{memo: make(map[string]hardline)}
	return b.commandsHardline(lexCommands(flat), maxDepth)
}

var (
	forkBombRe = regexp.MustCompile(`:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:`)
	// funcDefRe finds shell function definitions: NAME() { BODY } and
	// function NAME [()] { BODY }.
	funcDefRe           = regexp.MustCompile(`(?:function\s+)?([^\s(){}|&;<>'"]+)\s*\(\s*\)\s*\{([^{}]*)\}`)
	funcKeywordDefRe    = regexp.MustCompile(`function\s+([^\s(){}|&;<>'"]+)\s*\{([^{}]*)\}`)
	rawDeviceRedirectRe = regexp.MustCompile(`>\s*/dev/(?:sd|nvme|hd|mmcblk|vd|xvd|disk|rdisk|md|dm-|mapper/)`)
	rawDeviceRe         = regexp.MustCompile(`^/dev/(?:sd|nvme|hd|mmcblk|vd|xvd|disk|rdisk|md|dm-|mapper/)`)
)

// textHardline checks patterns that are recognised on the text itself,
// wherever they appear (quoted or not): fork bombs and redirections onto
// raw block devices.
func textHardline(text string) hardline {
	lowered := strings.ToLower(text)
	if forkBombRe.MatchString(lowered) || selfSpawningFunction(lowered) {
		return hardline{"fork bomb", "fork-bomb"}
	}
	if rawDeviceRedirectRe.MatchString(lowered) {
		return hardline{"write to raw block device", "raw-block-device"}
	}
	return hardline{}
}

// selfSpawningFunction reports a function definition whose body runs the
// function itself in a pipeline or in the background: the shape of every
// fork bomb (":(){ :|:& };:", "bomb(){ bomb|bomb& }; bomb", ...).
func selfSpawningFunction(text string) bool {
	if !strings.Contains(text, "{") {
		return false
	}
	for _, re := range []*regexp.Regexp{funcDefRe, funcKeywordDefRe} {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			name, body := m[1], m[2]
			if !strings.ContainsAny(body, "|&") {
				continue
			}
			for _, piece := range strings.FieldsFunc(body, func(r rune) bool {
				return r == '|' || r == '&' || r == ';' || r == '\n'
			}) {
				if f := strings.Fields(piece); len(f) > 0 && f[0] == name {
					return true
				}
			}
		}
	}
	return false
}

// commandsHardline checks each simple command, tracking literal variable
// assignments so "a=/; rm -rf $a" is read as "rm -rf /".
func (a *analysis) commandsHardline(cmds []simpleCommand, depth int) hardline {
	vars := map[string]string{}
	var prev []string
	for _, c := range cmds {
		for _, r := range c.redirects {
			if writesTarget(r.op) && rawDeviceRe.MatchString(cleanPath(r.target.text)) {
				return hardline{"write to raw block device", "raw-block-device"}
			}
		}
		words := expandWords(c.words, vars)
		recordAssignments(c.words, vars)
		if h := a.wordsHardline(words, depth); h.found() {
			return h
		}
		if c.sep == "|" && depth < maxDepth {
			if script := pipedScript(prev, words); script != "" {
				if h := a.hardlineIn(script, depth+1); h.found() {
					return h
				}
			}
		}
		prev = words
	}
	return hardline{}
}

// wordsHardline checks one simple command's words.
func (a *analysis) wordsHardline(words []string, depth int) hardline {
	if containsSudoStdin(words) {
		return hardline{"sudo password guessing via stdin", "sudo-stdin"}
	}
	words = normalizeGrouping(words)
	idx, name, scripts := hardlineEffective(words)
	if depth < maxDepth {
		for _, s := range scripts {
			if h := a.hardlineIn(s, depth+1); h.found() {
				return h
			}
		}
	}
	if name == "" {
		return hardline{}
	}
	args := words[idx+1:]
	if depth < maxDepth {
		for _, s := range nestedScripts(name, args) {
			if h := a.hardlineIn(s, depth+1); h.found() {
				return h
			}
		}
		for _, sub := range nestedCommands(name, args) {
			if h := a.wordsHardline(sub, depth+1); h.found() {
				return h
			}
		}
	}
	return destructive(name, args)
}

// destructive checks one effective command name and its arguments.
func destructive(name string, args []string) hardline {
	switch {
	case name == "rm" && rmTargetsCritical(args):
		return hardline{"recursive delete of root, home, or system directory", "rm-critical-path"}
	case name == "find" && findDeletesCritical(args):
		return hardline{"recursive delete of root, home, or system directory", "rm-critical-path"}
	case strings.HasPrefix(name, "mkfs") || name == "mke2fs":
		return hardline{"format filesystem", "mkfs"}
	case name == "dd" && ddWritesRawDevice(args):
		return hardline{"dd writes to raw block device", "raw-block-device"}
	case writesRawDevice(name, args):
		return hardline{"write to raw block device", "raw-block-device"}
	case name == "shutdown" || name == "reboot" || name == "halt" || name == "poweroff":
		return hardline{"system shutdown or reboot", "shutdown"}
	case name == "init" && anyOf(args, "0", "6"):
		return hardline{"init shutdown or reboot", "shutdown"}
	case name == "telinit" && anyOf(args, "0", "6"):
		return hardline{"telinit shutdown or reboot", "shutdown"}
	case name == "systemctl" && anyOf(args, "poweroff", "reboot", "halt", "kexec"):
		return hardline{"systemctl shutdown or reboot", "shutdown"}
	case name == "kill" && anyOf(args, "-1"):
		return hardline{"kill all processes", "kill-all"}
	case name == "killall5" || killsEverything(name, args):
		return hardline{"kill all processes", "kill-all"}
	case (name == "chmod" || name == "chown" || name == "chgrp") && permissionTargetsCritical(args):
		return hardline{"recursive permission or ownership change of root, home, or system directory", "permission-critical-path"}
	}
	return hardline{}
}

func anyOf(args []string, values ...string) bool {
	for _, a := range args {
		for _, v := range values {
			if a == v {
				return true
			}
		}
	}
	return false
}

// containsSudoStdin reports sudo with -S, --stdin or a short cluster
// containing S anywhere after it (up to "--").
func containsSudoStdin(words []string) bool {
	for i, w := range words {
		if baseName(w) != "sudo" {
			continue
		}
		for _, arg := range words[i+1:] {
			if arg == "--" {
				return false
			}
			if arg == "--stdin" || (strings.HasPrefix(arg, "-") && strings.Contains(arg[1:], "S")) {
				return true
			}
		}
	}
	return false
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

// shellKeywords start compound commands; the command follows them.
var shellKeywords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "do": true, "while": true,
	"until": true, "!": true, "{": true, "}": true, "fi": true, "done": true, "esac": true,
}

// wrapper describes a command that runs another command given after its
// options (and after a fixed number of operands).
type wrapper struct {
	valueOpts []string // options that take the next word as their value
	plus      bool     // "+x" is an option too
	operands  int      // operands before the wrapped command (timeout's duration)
}

var wrappers = map[string]wrapper{
	"command": {},
	"builtin": {},
	"nohup":   {},
	"setsid":  {},
	"busybox": {},
	"env":     {valueOpts: []string{"-a", "--argv0", "-C", "--chdir", "-S", "--split-string", "-u", "--unset"}},
	"exec":    {valueOpts: []string{"-a"}},
	"nice":    {valueOpts: []string{"-n", "--adjustment"}},
	"sudo": {valueOpts: []string{"-C", "--close-from", "-D", "--chdir", "-g", "--group", "-h", "--host",
		"-p", "--prompt", "-R", "--chroot", "-r", "--role", "-T", "--command-timeout", "-t", "--type",
		"-u", "--user", "-U", "--other-user"}},
	"doas":    {valueOpts: []string{"-a", "-C", "-u"}},
	"time":    {valueOpts: []string{"-f", "--format", "-o", "--output"}, plus: true},
	"timeout": {valueOpts: []string{"-s", "--signal", "-k", "--kill-after"}, operands: 1},
	"xargs": {valueOpts: []string{"-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "--max-lines",
		"-n", "--max-args", "-P", "--max-procs", "-s", "--max-chars", "--process-slot-var"}},
	"stdbuf":  {valueOpts: []string{"-i", "--input", "-o", "--output", "-e", "--error"}},
	"ionice":  {valueOpts: []string{"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"}},
	"chroot":  {valueOpts: []string{"--userspec", "--groups"}, operands: 1},
	"runuser": {valueOpts: []string{"-u", "--user", "-g", "--group", "-G", "--supp-group"}},
	"unshare": {valueOpts: []string{"-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd", "--propagation"}},
}

// hardlineEffective finds the command a simple command really runs: past
// assignments, compound-command keywords and wrappers (with their
// options). It also returns the scripts env -S/--split-string would run.
// "command -v/-V" only looks a name up, so it is its own command.
func hardlineEffective(words []string) (int, string, []string) {
	var scripts []string
	i := 0
	for i < len(words) && (isAssignment(words[i]) || shellKeywords[words[i]]) {
		i++
	}
	for i < len(words) {
		name := baseName(words[i])
		w, ok := wrappers[name]
		if !ok {
			return i, name, scripts
		}
		at := i
		i++
		if name == "command" {
			for _, arg := range words[i:] {
				if !strings.HasPrefix(arg, "-") {
					break
				}
				if arg == "-v" || arg == "-V" {
					return at, name, scripts
				}
			}
		}
		for i < len(words) {
			arg := words[i]
			if arg == "--" {
				i++
				break
			}
			isOpt := strings.HasPrefix(arg, "-") || (w.plus && strings.HasPrefix(arg, "+"))
			if !isOpt || arg == "-" || arg == "+" {
				break
			}
			if name == "env" {
				if s, ok := envSplitString(words, i); ok {
					scripts = append(scripts, s)
				}
			}
			if contains(w.valueOpts, arg) {
				i += 2
			} else {
				i++
			}
		}
		for n := 0; n < w.operands && i < len(words); n++ {
			i++
		}
		for i < len(words) && isAssignment(words[i]) {
			i++
		}
	}
	return i, "", scripts
}

// envSplitString returns the script of env's -S/--split-string at words[i].
func envSplitString(words []string, i int) (string, bool) {
	arg := words[i]
	switch {
	case arg == "-S" || arg == "--split-string":
		if i+1 < len(words) {
			return words[i+1], true
		}
	case strings.HasPrefix(arg, "--split-string="):
		return strings.TrimPrefix(arg, "--split-string="), true
	case strings.HasPrefix(arg, "-S"):
		return arg[2:], true
	case !strings.HasPrefix(arg, "--") && strings.Contains(arg, "S"):
		// -vS 'cmd': S ends the cluster and takes the rest or the next word.
		rest := arg[strings.IndexByte(arg, 'S')+1:]
		if rest != "" {
			return rest, true
		}
		if i+1 < len(words) {
			return words[i+1], true
		}
	}
	return "", false
}

var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "ksh": true, "dash": true, "ash": true,
	"mksh": true, "yash": true, "fish": true, "rbash": true,
}

// nestedScripts returns the shell text a command would evaluate: sh -c
// SCRIPT, eval ARGS, su/runuser/script -c SCRIPT, watch ARGS.
func nestedScripts(name string, args []string) []string {
	switch {
	case shells[name]:
		if s, ok := shellEvalScript(args); ok {
			return []string{s}
		}
	case name == "eval" && len(args) > 0:
		return []string{strings.Join(args, " ")}
	case name == "su" || name == "runuser" || name == "script":
		return dashCScripts(args)
	case name == "watch":
		i := 0
		for i < len(args) && strings.HasPrefix(args[i], "-") {
			if args[i] == "-n" || args[i] == "--interval" {
				i++
			}
			i++
		}
		if i < len(args) {
			return []string{strings.Join(args[i:], " ")}
		}
	}
	return nil
}

// shellEvalScript returns the script of sh -c (any short cluster with c)
// among a shell's options; ok is false when the shell runs a file or reads
// standard input instead.
func shellEvalScript(args []string) (string, bool) {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			return "", false
		}
		if arg == "-O" || arg == "+O" || arg == "--init-file" || arg == "--rcfile" || arg == "-o" || arg == "+o" {
			i++
			continue
		}
		if (!strings.HasPrefix(arg, "-") && !strings.HasPrefix(arg, "+")) || arg == "-" || arg == "+" {
			return "", false
		}
		if !strings.HasPrefix(arg, "--") && strings.Contains(arg[1:], "c") {
			if i+1 < len(args) {
				return args[i+1], true
			}
			return "", true
		}
	}
	return "", false
}

// dashCScripts returns the values of -c/--command (a short cluster
// containing c takes the next word).
func dashCScripts(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			return out
		case strings.HasPrefix(arg, "--command="):
			out = append(out, strings.TrimPrefix(arg, "--command="))
		case arg == "--command" || (strings.HasPrefix(arg, "-") && !strings.HasPrefix(arg, "--") && strings.Contains(arg, "c")):
			if i+1 < len(args) {
				out = append(out, args[i+1])
				i++
			}
		}
	}
	return out
}

// nestedCommands returns the commands find runs with -exec, -execdir, -ok
// and -okdir (up to ";" or "+").
func nestedCommands(name string, args []string) [][]string {
	if name != "find" {
		return nil
	}
	var out [][]string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" {
				j++
			}
			if j > i+1 {
				out = append(out, args[i+1:j])
			}
			i = j
		}
	}
	return out
}

// pipedScript returns what a shell reading standard input would run when
// prev is echo or printf piped into it: "echo 'rm -rf /' | sh".
func pipedScript(prev, words []string) string {
	if len(prev) == 0 {
		return ""
	}
	words = normalizeGrouping(words)
	idx, name, _ := hardlineEffective(words)
	if !shells[name] {
		return ""
	}
	if _, ok := shellEvalScript(words[idx+1:]); ok {
		return ""
	}
	for _, arg := range words[idx+1:] {
		if !strings.HasPrefix(arg, "-") && !strings.HasPrefix(arg, "+") {
			return "" // runs a script file
		}
	}
	prev = normalizeGrouping(prev)
	pidx, pname, _ := hardlineEffective(prev)
	if pname != "echo" && pname != "printf" {
		return ""
	}
	text := strings.Join(prev[pidx+1:], " ")
	return strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\r`, "\r").Replace(text)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
