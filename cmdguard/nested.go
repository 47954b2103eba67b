package cmdguard

import (
	"cmp"
	"slices"
	"strings"
)

var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "ksh": true, "dash": true, "ash": true,
	"mksh": true, "yash": true, "fish": true, "rbash": true,
}

// nestedScripts returns the shell text a command would evaluate: sh -c
// SCRIPT, eval ARGS, su/runuser/script -c SCRIPT, watch ARGS, the
// action of trap, the values of alias.
func nestedScripts(name string, args []string) []string {
	switch {
	case shells[name]:
		if s := shellInvocation(args); s.script != "" {
			return []string{s.script}
		}
	case name == "eval" && len(args) > 0:
		return []string{strings.Join(args, " ")}
	case name == "su" || name == "runuser" || name == "script":
		return dashCScripts(args)
	case name == "watch":
		i := 0
		for i < len(args) && isOption(args[i]) {
			if args[i] == "-n" || args[i] == "--interval" {
				i++
			}
			i++
		}
		if i < len(args) {
			return []string{strings.Join(args[i:], " ")}
		}
	case name == "trap":
		// trap [-lp] [[ACTION] SIGNAL...]: the first operand is shell code.
		for _, a := range args {
			if !isOption(a) && a != "--" {
				return []string{a}
			}
		}
	case name == "alias":
		// alias NAME=VALUE...: a later command named NAME runs VALUE.
		var out []string
		for _, a := range args {
			if _, v, ok := strings.Cut(a, "="); ok {
				out = append(out, v)
			}
		}
		return out
	}
	return nil
}

// shellCall is how a shell was asked to run: a -c script, standard input
// (no operand, or -s), or a script file.
type shellCall struct {
	script string // the -c script ("" when none or empty)
	dashC  bool   // -c was given
	stdin  bool   // the shell reads its commands from standard input
}

// shellInvocation parses a shell's arguments the way sh does: options
// (clusters, -o/+o and -O/+O with a value, bash's --rcfile/--init-file)
// until "--" or the first operand. With c among the options, the first
// operand is the script; otherwise -s, or no operand at all, means the
// commands come from standard input.
func shellInvocation(args []string) shellCall {
	var s shellCall
	i := 0
	for ; i < len(args); i++ {
		arg := args[i]
		if arg == "--" || arg == "-" {
			i++ // a lone "-" ends the options as "--" does
			break
		}
		if arg == "-o" || arg == "+o" || arg == "-O" || arg == "+O" || isLong(arg, "--rcfile", "--init-file") {
			if !strings.Contains(arg, "=") {
				i++
			}
			continue
		}
		if len(arg) < 2 || (arg[0] != '-' && arg[0] != '+') {
			break
		}
		if arg[1] == '-' {
			continue
		}
		if strings.Contains(arg[1:], "c") {
			s.dashC = true
		}
		if strings.Contains(arg[1:], "s") {
			s.stdin = true
		}
	}
	switch {
	case s.dashC:
		s.stdin = false
		if i < len(args) {
			s.script = args[i]
		}
	case i >= len(args):
		s.stdin = true
	}
	return s
}

// dashCScripts returns the values of -c/--command (a short cluster
// containing c takes the rest of the cluster or the next word).
func dashCScripts(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			return out
		case isLong(arg, "--command"):
			if _, v, ok := strings.Cut(arg, "="); ok {
				out = append(out, v)
			} else if i+1 < len(args) {
				out = append(out, args[i+1])
				i++
			}
		case isOption(arg) && !strings.HasPrefix(arg, "--") && strings.Contains(arg, "c"):
			if rest := arg[strings.IndexByte(arg, 'c')+1:]; rest != "" {
				out = append(out, rest)
			} else if i+1 < len(args) {
				out = append(out, args[i+1])
				i++
			}
		}
	}
	return out
}

// nestedCommands returns the commands find runs with -exec, -execdir, -ok
// and -okdir (up to ";" or "+"), each also with a "{}" argument replaced
// by find's starting points, which are among the files it passes.
func nestedCommands(name string, args []string) [][]string {
	if name != "find" {
		return nil
	}
	starts := findStarts(args)
	var out [][]string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" {
				j++
			}
			if j > i+1 {
				cmd := args[i+1 : j]
				out = append(out, cmd)
				if slices.Contains(cmd, "{}") {
					for _, s := range starts {
						out = append(out, replaceAll(cmd, "{}", s))
					}
				}
			}
			i = j
		}
	}
	return out
}

// findStarts returns find's starting points: the operands before its
// first expression word ("." when there are none).
func findStarts(args []string) []string {
	var starts []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" {
			break
		}
		starts = append(starts, a)
	}
	if len(starts) == 0 {
		return []string{"."}
	}
	return starts
}

func replaceAll(words []string, old, repl string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = strings.ReplaceAll(w, old, repl)
	}
	return out
}

// pipedInput returns the text a simple command writes to its standard
// output when the guard can know it: the arguments of echo or printf, or
// what cat copies from a here-string.
func pipedInput(c simpleCommand, words []string) (string, bool) {
	words = normalizeGrouping(words)
	idx, name, _ := hardlineEffective(words)
	switch name {
	case "echo":
		return unescape(strings.Join(words[idx+1:], " ")), true
	case "printf":
		return printfText(words[idx+1:]), true
	case "cat":
		for _, r := range c.redirects {
			if r.op == "<<<" {
				return r.target.text, true
			}
		}
	}
	return "", false
}

// stdinScripts returns what a command does with the text on its standard
// input when that is modelled: a shell reading standard input runs it as a
// script; xargs runs its command with the text as arguments.
func stdinScripts(words []string, input string) (scripts []string, commands [][]string) {
	words = normalizeGrouping(words)
	idx, name, _ := hardlineEffective(words)
	if shells[name] && shellInvocation(words[idx+1:]).stdin {
		scripts = append(scripts, input)
	}
	for i, w := range words {
		if baseName(w) == "xargs" {
			commands = append(commands, xargsCommands(words[i+1:], input)...)
			break
		}
	}
	return scripts, commands
}

// xargsCommands returns the commands xargs would run with input: its
// command with the input's words appended, or with each input line put in
// place of the -I/-i/--replace string.
func xargsCommands(args []string, input string) [][]string {
	next, opts := skipWrapper(args, 0, wrappers["xargs"])
	cmd := args[next:]
	if len(cmd) == 0 {
		cmd = []string{"echo"}
	}
	var out [][]string
	for _, o := range opts {
		if !o.named("-I", "-i", "--replace") {
			continue
		}
		repl := cmp.Or(o.value, "{}")
		for _, line := range strings.Split(input, "\n") {
			out = append(out, replaceAll(cmd, repl, strings.TrimSpace(line)))
		}
	}
	return append(out, append(append([]string(nil), cmd...), strings.Fields(input)...))
}

// unescape interprets the backslash escapes echo -e and dash's echo do.
func unescape(s string) string {
	return strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\r`, "\r", `\\`, `\`).Replace(s)
}

// printfText approximates what printf FORMAT ARGS prints: conversions
// take the next argument verbatim, "%%" is a percent sign, escapes are
// interpreted, and the format is reused while arguments remain, as the
// shell's printf does.
func printfText(args []string) string {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 || isOption(args[0]) {
		return "" // printf -v assigns a variable and prints nothing
	}
	format, rest := unescape(args[0]), args[1:]
	var b strings.Builder
	for {
		used := false
		for i := 0; i < len(format); i++ {
			if format[i] != '%' || i+1 >= len(format) {
				b.WriteByte(format[i])
				continue
			}
			j := i + 1
			for j < len(format) && strings.IndexByte("-+ #0123456789.", format[j]) >= 0 {
				j++
			}
			if j >= len(format) || format[j] == '%' {
				b.WriteByte('%')
				i = j
				continue
			}
			if len(rest) > 0 {
				arg := rest[0]
				if format[j] == 'b' {
					arg = unescape(arg)
				}
				b.WriteString(arg)
				rest = rest[1:]
				used = true
			}
			i = j
		}
		if !used || len(rest) == 0 {
			return b.String()
		}
	}
}
