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

// parseOpts parses GNU-style options anywhere among args (GNU permutes)
// until "--".
func parseOpts(args []string, spec optSpec) (opts []opt, operands []string) {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			return opts, append(operands, args[i+1:]...)
		case strings.HasPrefix(arg, "--"):
			name, value, inline := strings.Cut(arg, "=")
			if !inline && takesLong(name, spec.long) && i+1 < len(args) {
				value = args[i+1]
				i++
			}
			opts = append(opts, opt{name: name, value: value})
		case strings.HasPrefix(arg, "-") && len(arg) > 1:
			for j := 1; j < len(arg); j++ {
				l := arg[j]
				name := "-" + string(l)
				if strings.IndexByte(spec.short, l) >= 0 {
					value := arg[j+1:]
					if value == "" && i+1 < len(args) {
						value = args[i+1]
						i++
					}
					opts = append(opts, opt{name: name, value: value})
					break
				}
				if strings.IndexByte(spec.optional, l) >= 0 {
					opts = append(opts, opt{name: name, value: arg[j+1:]})
					break
				}
				opts = append(opts, opt{name: name})
			}
		default:
			operands = append(operands, arg)
		}
	}
	return opts, operands
}

// longMatches reports whether a long option as written names canonical:
// exactly, or as an abbreviation GNU getopt would accept. An ambiguous
// abbreviation matches every option it could mean: the tool would refuse
// it, and the guard only ever prompts on a match.
func longMatches(written, canonical string) bool {
	return written == canonical || (len(written) > 2 && strings.HasPrefix(canonical, written))
}

func takesLong(name string, long []string) bool {
	for _, l := range long {
		if longMatches(name, l) {
			return true
		}
	}
	return false
}

// has reports whether any option is one of names (short letters exactly,
// long options also abbreviated).
func has(opts []opt, names ...string) bool {
	for _, o := range opts {
		for _, n := range names {
			if o.name == n || (strings.HasPrefix(n, "--") && strings.HasPrefix(o.name, "--") && longMatches(o.name, n)) {
				return true
			}
		}
	}
	return false
}

// values returns the values of the options named.
func values(opts []opt, names ...string) []string {
	var out []string
	for _, o := range opts {
		for _, n := range names {
			if o.name == n || (strings.HasPrefix(n, "--") && strings.HasPrefix(o.name, "--") && longMatches(o.name, n)) {
				out = append(out, o.value)
				break
			}
		}
	}
	return out
}

// Option grammars of the read-only commands whose options can write,
// execute or read elsewhere.
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
		"--threads", "--encoding", "--context", "--after-context", "--before-context", "--ignore-file", "--exclude-from"}}
	duSpec      = optSpec{short: "BdtX", long: []string{"--exclude-from", "--exclude", "--max-depth", "--threshold", "--time-style", "--block-size", "--files0-from"}}
	wcSpec      = optSpec{long: []string{"--files0-from"}}
	envSpec     = optSpec{short: "aCSu", long: []string{"--argv0", "--chdir", "--split-string", "--unset"}}
	gitGrepSpec = optSpec{short: "ABCefm", optional: "O", long: []string{"--file", "--regexp",
		"--max-count", "--after-context", "--before-context", "--context", "--max-depth", "--threads"}}
	gitDiffSpec = optSpec{short: "OSGU", long: []string{"--output", "--relative", "--word-diff-regex"}}
	gitLsSpec   = optSpec{short: "xX", long: []string{"--exclude-from", "--pathspec-from-file", "--exclude", "--exclude-per-directory"}}
)
