package cmdguard

import (
	"regexp"
	"strings"
	"sync"
)

type kind int

const (
	kindUnknown kind = iota
	kindRead         // literal read-only command: may run without approval
	kindDev          // runs project code (tests, builds): always asks
)

// readCommands are the read-only commands the spec lists. Options of theirs that
// write, execute or read elsewhere were caught by step 9 before this list
// is consulted.
var readCommands = map[string]bool{
	"pwd": true, "ls": true, "cat": true, "head": true, "tail": true, "wc": true, "sort": true,
	"uniq": true, "cut": true, "tr": true, "nl": true, "stat": true, "file": true, "du": true,
	"df": true, "tree": true, "date": true, "whoami": true, "uname": true, "printf": true,
	"echo": true, "sleep": true, "true": true, "false": true, "rg": true, "grep": true, "find": true,
}

var devCommands = map[string]bool{"pytest": true, "ruff": true, "mypy": true, "pyright": true}

// safeScriptRe names package scripts and make targets that are test, build
// or lint runs.
var safeScriptRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(test|tests|build|lint|check|typecheck|dev|preview)(:.+)?$`)
})

// safeKind classifies a segment's words.
func safeKind(words []string) kind {
	idx, name := effectiveCommand(words)
	if name == "" {
		return kindUnknown
	}
	args := words[idx+1:]
	switch {
	case readCommands[name]:
		return kindRead
	case name == "sed":
		for _, a := range args {
			if strings.HasPrefix(a, "-") && strings.Contains(a, "n") {
				return kindRead
			}
		}
		return kindUnknown
	case name == "git":
		if isSafeGit(args) {
			return kindRead
		}
		return kindUnknown
	case devCommands[name]:
		return kindDev
	case strings.HasPrefix(name, "python"):
		if hasPrefix(args, "-m", "pytest") || hasPrefix(args, "-m", "compileall") {
			return kindDev
		}
	case name == "uv":
		if hasPrefix(args, "run") {
			if k := safeKind(args[1:]); k == kindRead || k == kindDev {
				return kindDev
			}
			return kindUnknown
		}
		if hasPrefix(args, "--version") || hasPrefix(args, "version") {
			return kindDev
		}
	case name == "npm" || name == "pnpm" || name == "yarn":
		if len(args) > 0 && (args[0] == "test" || args[0] == "run" || args[0] == "exec") {
			script := args[0]
			if args[0] == "run" && len(args) > 1 {
				script = args[1]
			}
			if safeScriptRe().MatchString(script) {
				return kindDev
			}
		}
	case name == "go":
		if hasPrefix(args, "test") || hasPrefix(args, "vet") {
			return kindDev
		}
	case name == "cargo":
		if hasPrefix(args, "test") || hasPrefix(args, "check") || hasPrefix(args, "build") ||
			hasPrefix(args, "clippy") || hasPrefix(args, "fmt", "--check") {
			return kindDev
		}
	case name == "make":
		if len(args) == 0 {
			return kindUnknown
		}
		for _, a := range args {
			if !strings.HasPrefix(a, "-") && !safeScriptRe().MatchString(a) {
				return kindUnknown
			}
		}
		return kindDev
	}
	return kindUnknown
}

// isSafeGit: git status diff log show rev-parse ls-files grep describe, and
// the listing shapes of remote, branch, tag and worktree.
func isSafeGit(args []string) bool {
	if len(args) == 0 {
		return false
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "status", "diff", "log", "show", "rev-parse", "ls-files", "grep", "describe":
		return true
	case "remote":
		return len(rest) == 0 || (len(rest) == 1 && (rest[0] == "-v" || rest[0] == "--verbose")) || rest[0] == "get-url"
	case "branch":
		return len(rest) == 0 || (len(rest) == 1 && rest[0] == "--show-current") || rest[0] == "--list" || rest[0] == "-l"
	case "tag":
		return len(rest) == 0 || rest[0] == "--list" || rest[0] == "-l"
	case "worktree":
		return len(rest) > 0 && rest[0] == "list"
	}
	return false
}
