package cmdguard

import "strings"

// optSpec is as much of a command's option grammar as the guard needs to
// find one option reliably: which short letters and long options consume a
// value. GNU tools accept clustered short options ("-nf FILE") and
// unambiguous abbreviations of long ones ("--out=FILE" for --output); the
// guard honours both so neither hides an option.
type optSpec struct {
	short    string   // short letters taking a value (attached, or the next word)
	optional string   // short letters taking an optional value, attached only
	long     []string // long options taking a value ("=v", or the next word)
}

// opt is one parsed option: "-f" or the long name as written ("--fil").
type opt struct {
	name  string
	value string
}

// parseOne parses the option word args[i] (which starts with '-' and is
// neither "-" nor "--") and returns the options it stands for and the
// index of the next word.
func parseOne(args []string, i int, spec optSpec) ([]opt, int) {
	arg := args[i]
	if strings.HasPrefix(arg, "--") {
		name, value, inline := strings.Cut(arg, "=")
		if !inline && takesLong(name, spec.long) && i+1 < len(args) {
			return []opt{{name: name, value: args[i+1]}}, i + 2
		}
		return []opt{{name: name, value: value}}, i + 1
	}
	var opts []opt
	for j := 1; j < len(arg); j++ {
		l := arg[j]
		name := "-" + string(l)
		if strings.IndexByte(spec.short, l) >= 0 {
			if value := arg[j+1:]; value != "" || i+1 >= len(args) {
				return append(opts, opt{name: name, value: value}), i + 1
			}
			return append(opts, opt{name: name, value: args[i+1]}), i + 2
		}
		if strings.IndexByte(spec.optional, l) >= 0 {
			return append(opts, opt{name: name, value: arg[j+1:]}), i + 1
		}
		opts = append(opts, opt{name: name})
	}
	return opts, i + 1
}

func isOption(arg string) bool {
	return strings.HasPrefix(arg, "-") && arg != "-" && arg != "--"
}

// parseOpts parses GNU-style options anywhere among args (GNU permutes)
// until "--".
func parseOpts(args []string, spec optSpec) (opts []opt, operands []string) {
	for i := 0; i < len(args); {
		switch arg := args[i]; {
		case arg == "--":
			return opts, append(operands, args[i+1:]...)
		case isOption(arg):
			var o []opt
			o, i = parseOne(args, i, spec)
			opts = append(opts, o...)
		default:
			operands = append(operands, arg)
			i++
		}
	}
	return opts, operands
}

// optsOf returns only the options of args.
func optsOf(args []string, spec optSpec) []opt {
	opts, _ := parseOpts(args, spec)
	return opts
}

// longMatches reports whether a long option as written names canonical:
// exactly, or as an abbreviation GNU getopt would accept. An ambiguous
// abbreviation matches every option it could mean: the tool would refuse
// it, and the guard only ever becomes stricter on a match. "--" alone
// abbreviates nothing.
func longMatches(written, canonical string) bool {
	return written == canonical || (len(written) > 2 && strings.HasPrefix(canonical, written))
}

// isLong reports whether the word a (with or without "=value") names one
// of the long options, abbreviations included.
func isLong(a string, canonical ...string) bool {
	if !strings.HasPrefix(a, "--") {
		return false
	}
	name, _, _ := strings.Cut(a, "=")
	for _, c := range canonical {
		if longMatches(name, c) {
			return true
		}
	}
	return false
}

func takesLong(name string, long []string) bool {
	for _, l := range long {
		if longMatches(name, l) {
			return true
		}
	}
	return false
}

// named reports whether a parsed option is one of names: short letters
// exactly, long options also abbreviated.
func (o opt) named(names ...string) bool {
	for _, n := range names {
		if o.name == n || (strings.HasPrefix(n, "--") && strings.HasPrefix(o.name, "--") && longMatches(o.name, n)) {
			return true
		}
	}
	return false
}

// has reports whether any option is one of names.
func has(opts []opt, names ...string) bool {
	for _, o := range opts {
		if o.named(names...) {
			return true
		}
	}
	return false
}

// values returns the values of the options named.
func values(opts []opt, names ...string) []string {
	var out []string
	for _, o := range opts {
		if o.named(names...) {
			out = append(out, o.value)
		}
	}
	return out
}

// Option grammars of the read-only commands whose options can write,
// execute or read elsewhere, and of the wrappers that run a command.
var (
	sortSpec = optSpec{short: "kotST", long: []string{"--key", "--output", "--buffer-size",
		"--field-separator", "--temporary-directory", "--compress-program", "--random-source",
		"--files0-from", "--parallel", "--batch-size", "--sort"}}
	treeSpec = optSpec{short: "LPIoHT", long: []string{"--output", "--filelimit", "--timefmt", "--sort", "--charset", "--fromfile"}}
	fileSpec = optSpec{short: "eFfmP", long: []string{"--files-from", "--magic-file", "--separator", "--exclude", "--exclude-quiet", "--parameter"}}
	dateSpec = optSpec{short: "dfrs", optional: "I", long: []string{"--date", "--file", "--reference", "--set"}}
	sedSpec  = optSpec{short: "efl", optional: "i", long: []string{"--expression", "--file", "--line-length"}}
	grepSpec = optSpec{short: "ABCDdefm", long: []string{"--file", "--exclude-from", "--regexp",
		"--max-count", "--after-context", "--before-context", "--context", "--devices", "--directories",
		"--exclude", "--include", "--exclude-dir", "--label", "--binary-files"}}
	rgSpec = optSpec{short: "ABCEMTdefgjmrt", long: []string{"--file", "--pre", "--pre-glob", "--glob",
		"--iglob", "--type", "--type-not", "--regexp", "--replace", "--max-count", "--max-depth",
		"--threads", "--encoding", "--context", "--after-context", "--before-context", "--ignore-file",
		"--hostname-bin"}}
	duSpec      = optSpec{short: "BdtX", long: []string{"--exclude-from", "--exclude", "--max-depth", "--threshold", "--time-style", "--block-size", "--files0-from"}}
	wcSpec      = optSpec{long: []string{"--files0-from"}}
	uniqSpec    = optSpec{short: "fsw", long: []string{"--skip-fields", "--skip-chars", "--check-chars", "--group", "--all-repeated"}}
	printfSpec  = optSpec{short: "v"}
	gitGrepSpec = optSpec{short: "ABCefm", optional: "O", long: []string{"--file", "--regexp",
		"--max-count", "--after-context", "--before-context", "--context", "--max-depth", "--threads"}}
	gitDiffSpec = optSpec{short: "OSGU", long: []string{"--output", "--relative", "--word-diff-regex"}}
	gitLsSpec   = optSpec{short: "xX", long: []string{"--exclude-from", "--pathspec-from-file", "--exclude", "--exclude-per-directory"}}
)
