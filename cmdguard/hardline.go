package cmdguard

import (
	"regexp"
	"strings"
	"sync"
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
// bodies of its substitutions, then in the text itself. Going deeper than
// maxDepth exhausts the budget like too many texts do: the nesting was not
// followed to its end, so the candidate cannot be trusted.
func (a *analysis) hardlineIn(text string, depth int) hardline {
	if a.exhausted {
		return hardline{}
	}
	if depth > maxDepth {
		a.exhausted = true
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

// flatWindow bounds the arguments one command of a flattened reading is
// judged with, so the last look stays linear in the size of the text.
const flatWindow = 64

// flattenedHardline is the last look at a command too large or too nested
// to analyse: without recursion, quotes become spaces and every backtick
// and parenthesis a command separator (so "echo $(rm -rf /)" reads as
// "echo ; rm -rf /"), and every word of every command is tried as the
// start of a command ("eval eval rm -rf /", "sh -c sh -c rm -rf /").
func (a *analysis) flattenedHardline(cmd string) hardline {
	flat := strings.Map(func(r rune) rune {
		switch r {
		case '\'', '"', '$':
			return ' '
		case '`', '(', ')':
			return ';'
		}
		return r
	}, cmd)
	if h := textHardline(cmd); h.found() {
		return h
	}
	for _, c := range lexCommands(flat) {
		words := make([]string, len(c.words))
		for i, w := range c.words {
			words[i] = w.text
		}
		for k, w := range words {
			window := words[k:min(len(words), k+1+flatWindow)]
			if baseName(w) == "sudo" && containsSudoStdin(window) {
				return hardline{"sudo password guessing via stdin", "sudo-stdin"}
			}
			if h := destructive(strings.ToLower(baseName(w)), window[1:]); h.found() {
				return h
			}
		}
	}
	return hardline{}
}

var (
	forkBombRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:`) })
	// funcDefRe finds shell function definitions: NAME() { BODY } and
	// function NAME [()] { BODY }.
	funcDefRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:function\s+)?([^\s(){}|&;<>'"]+)\s*\(\s*\)\s*\{([^{}]*)\}`)
	})
	funcKeywordDefRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`function\s+([^\s(){}|&;<>'"]+)\s*\{([^{}]*)\}`) })
	rawDeviceRedirectRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`>\s*/dev/(?:sd|nvme|hd|mmcblk|vd|xvd|disk|rdisk|md|dm-|mapper/)`)
	})
	rawDeviceRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^/dev/(?:sd|nvme|hd|mmcblk|vd|xvd|disk|rdisk|md|dm-|mapper/)`)
	})
)

// textHardline checks patterns that are recognised on the text itself,
// wherever they appear (quoted or not): fork bombs and redirections onto
// raw block devices.
func textHardline(text string) hardline {
	lowered := strings.ToLower(text)
	if forkBombRe().MatchString(lowered) || selfSpawningFunction(lowered) {
		return hardline{"fork bomb", "fork-bomb"}
	}
	if rawDeviceRedirectRe().MatchString(lowered) {
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
	for _, re := range []*regexp.Regexp{funcDefRe(), funcKeywordDefRe()} {
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
// assignments so "a=/; rm -rf $a" is read as "rm -rf /", and following
// what one command pipes into the next when the guard can know it
// ("echo 'rm -rf /' | sh", "echo / | xargs rm -rf").
func (a *analysis) commandsHardline(cmds []simpleCommand, depth int) hardline {
	vars := map[string]string{}
	var prev simpleCommand
	var prevWords []string
	for _, c := range cmds {
		if h := a.evaluatedWords(c, depth); h.found() {
			return h
		}
		words := expandWords(c.words, vars)
		recordAssignments(c.words, vars)
		for _, r := range c.redirects {
			if writesTarget(r.op) && rawDeviceRe().MatchString(cleanPath(r.target.text)) {
				return hardline{"write to raw block device", "raw-block-device"}
			}
			if r.op == "<<<" {
				if h := a.stdinHardline(words, r.target.text, depth); h.found() {
					return h
				}
			}
		}
		if h := a.wordsHardline(words, depth); h.found() {
			return h
		}
		if c.sep == "|" && prevWords != nil {
			if input, ok := pipedInput(prev, prevWords); ok {
				if h := a.stdinHardline(words, input, depth); h.found() {
					return h
				}
			}
		}
		prev, prevWords = c, words
	}
	return hardline{}
}

// evaluatedWords checks the substitutions bash runs inside words it
// evaluates as code after quote removal: array subscripts and arithmetic
// in the names and values given to printf -v, read, declare, let, unset,
// test -v, [[ ]], (( )), in assignments ("a['$(cmd)']=1", "x='a[$(cmd)]';
// echo $((x))"), and in the bodies of ${...}, where single quotes do not
// protect a subscript. Quoting such a payload hides it from the text scan,
// not from bash, so quotes are dropped before it is scanned.
func (a *analysis) evaluatedWords(c simpleCommand, depth int) hardline {
	check := func(w word) hardline {
		t := w.text
		if !w.quoted && !strings.Contains(t, "${") && !strings.Contains(t, "$((") && !strings.Contains(t, "$[") {
			return hardline{}
		}
		if !strings.ContainsAny(t, "$`") {
			return hardline{}
		}
		unquoted := strings.NewReplacer("'", "", `"`, "").Replace(t)
		for _, p := range scanExpansions(unquoted).payloads {
			if h := a.hardlineIn(p, depth+1); h.found() {
				return h
			}
		}
		return hardline{}
	}
	for _, w := range c.words {
		if h := check(w); h.found() {
			return h
		}
	}
	return hardline{}
}

// stdinHardline checks what the command words do with input on their
// standard input.
func (a *analysis) stdinHardline(words []string, input string, depth int) hardline {
	scripts, commands := stdinScripts(words, input)
	for _, s := range scripts {
		if h := a.hardlineIn(s, depth+1); h.found() {
			return h
		}
	}
	for _, cmd := range commands {
		if h := a.wordsHardline(cmd, depth+1); h.found() {
			return h
		}
	}
	return hardline{}
}

// wordsHardline checks one simple command's words.
func (a *analysis) wordsHardline(words []string, depth int) hardline {
	// Each command judged counts against the budget too, so no shape of
	// nesting (find -exec chains, keyword lists) can multiply the work.
	a.texts++
	if depth > maxDepth || a.texts > maxTexts {
		a.exhausted = true
		return hardline{}
	}
	if containsSudoStdin(words) {
		return hardline{"sudo password guessing via stdin", "sudo-stdin"}
	}
	words = normalizeGrouping(words)
	idx, name, scripts := hardlineEffective(words)
	for _, s := range scripts {
		if h := a.hardlineIn(s, depth+1); h.found() {
			return h
		}
	}
	// A compound command's body can start after a keyword or brace that
	// the lexer left inside the word list ("coproc NAME { rm -rf /; }").
	for k := idx + 1; k < len(words); k++ {
		if bodyOpeners[words[k]] {
			if h := a.wordsHardline(words[k+1:], depth+1); h.found() {
				return h
			}
			break
		}
	}
	if name == "" {
		return hardline{}
	}
	args := words[idx+1:]
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
	return destructive(name, args)
}

// bodyOpeners are the words after which a command starts.
var bodyOpeners = map[string]bool{
	"{": true, "if": true, "then": true, "else": true, "elif": true, "do": true,
	"while": true, "until": true, "!": true, "coproc": true,
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
			if isLong(arg, "--stdin") || (strings.HasPrefix(arg, "-") && !strings.HasPrefix(arg, "--") && strings.Contains(arg[1:], "S")) {
				return true
			}
		}
	}
	return false
}
