package cmdguard

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// promptableTokens is step 9: the first rule that matches any segment,
// segments in order.
func promptableTokens(segments [][]string) (string, string) {
	for _, words := range segments {
		if reason, key := promptableSegment(words); key != "" {
			return reason, key
		}
	}
	return "", ""
}

func promptableSegment(words []string) (string, string) {
	idx, name := effectiveCommand(words)
	if reason, key := promptableEnvWrapper(words[:idx]); key != "" {
		return reason, key
	}
	if name == "" {
		return "", ""
	}
	args := words[idx+1:]
	if !isBareExecutable(words[idx]) {
		return "relative or explicit executable paths can run workspace code", "project-code-execution"
	}
	overlay := false
	for _, w := range words[:idx] {
		if isAssignment(w) {
			overlay = true
		}
	}
	switch name {
	case "cd", "pushd", "popd":
		return "shell working-directory changes require approval", "cwd-change"
	case "rm", "rmdir", "unlink":
		return "delete files from the terminal", "file-delete"
	case "cp", "mv", "mkdir", "touch", "chmod", "chown", "chgrp", "ln", "install":
		return "write or mutate files", "file-write"
	case "tee":
		return "write files through tee", "file-write"
	}
	if reason, key := promptableOptions(name, args); key != "" {
		return reason, key
	}
	if name == "find" {
		if findDeletes(args) {
			return "find deleting files", "find-delete"
		}
		if anyOf(args, "-fls", "-fprint", "-fprint0", "-fprintf") {
			return "find writes output to a file", "file-write"
		}
		if anyOf(args, "-exec", "-execdir", "-ok", "-okdir") {
			return "find executes workspace or project code", "project-code-execution"
		}
	}
	if name == "rg" && has(optsOf(args, rgSpec), "--pre", "--hostname-bin") {
		return "ripgrep executes a preprocessor command", "project-code-execution"
	}
	if name == "printf" {
		// bash evaluates an array subscript in the name as arithmetic,
		// running any substitution in it, and the variable can be PATH.
		if _, opts := skipWrapper(args, 0, wrapper{spec: printfSpec}); has(opts, "-v") {
			return "printf -v assigns a shell variable and evaluates its subscript", "complex-shell"
		}
	}
	if name == "git" {
		if reason, key := promptableGit(args); key != "" {
			return reason, key
		}
	}
	switch {
	case name == "curl" || name == "wget":
		return "download from the network", "network-download"
	case shells[name] && hasShortFlag(args, "c"):
		return "shell command evaluation", "shell-eval"
	case name == "eval":
		return "shell command evaluation", "shell-eval"
	case strings.HasPrefix(name, "python") && hasShortFlag(args, "c"):
		return "python command evaluation", "script-eval"
	case strings.HasPrefix(name, "python") && hasPrefix(args, "-m", "pip", "install"):
		return "install Python packages", "dependency-change"
	case (name == "node" || name == "perl" || name == "ruby") && hasShortFlag(args, "e", "c"):
		return "script command evaluation", "script-eval"
	case (name == "sed" || name == "perl" || name == "ruby") && hasShortFlag(args, "i"):
		return "in-place file edit", "in-place-edit"
	}
	if name == "sed" {
		if reason, key := promptableSed(args); key != "" {
			return reason, key
		}
	}
	switch {
	case name == "sudo":
		return "sudo command", "sudo"
	case name == "systemctl" || name == "service" || name == "launchctl":
		return "system service control", "service-control"
	case name == "kill" || name == "pkill" || name == "killall":
		return "kill processes", "process-kill"
	case name == "docker":
		return "container lifecycle command", "container-lifecycle"
	case (name == "pip" || name == "pip3") && hasPrefix(args, "install"):
		return "install Python packages", "dependency-change"
	case name == "uv" && uvChangesDependencies(args):
		return "change or install dependencies", "dependency-change"
	case (name == "npm" || name == "pnpm" || name == "yarn") && nodeChangesDependencies(args):
		return "change or install dependencies", "dependency-change"
	case name == "npx" || ((name == "pnpm" || name == "yarn") && hasPrefix(args, "dlx")):
		return "download and execute package binaries", "dependency-exec"
	case name == "cargo" && hasPrefix(args, "install"):
		return "install Rust packages", "dependency-change"
	case name == "go" && hasPrefix(args, "install"):
		return "install Go packages", "dependency-change"
	case overlay:
		return "inline environment assignments require approval", "environment-overlay"
	}
	return "", ""
}

// promptableEnvWrapper: env changing directory or splitting a string into a
// command, among the wrapper words before the effective command.
func promptableEnvWrapper(prefix []string) (string, string) {
	isEnv := false
	for _, w := range prefix {
		if baseName(w) == "env" {
			isEnv = true
		}
	}
	if !isEnv {
		return "", ""
	}
	opts, _ := parseOpts(prefix, envSpec)
	if has(opts, "-C", "--chdir") {
		return "env working-directory overrides require approval", "cwd-change"
	}
	if has(opts, "-S", "--split-string") {
		return "env split-string evaluates a command", "shell-eval"
	}
	return "", ""
}

// promptableOptions: options of read-only tools that write, execute or
// change the system.
func promptableOptions(name string, args []string) (string, string) {
	switch name {
	case "sort":
		opts, _ := parseOpts(args, sortSpec)
		if has(opts, "--compress-program") {
			return "sort executes a compression program", "project-code-execution"
		}
		if has(opts, "-T", "--temporary-directory") {
			return "sort writes temporary files", "file-write"
		}
		if has(opts, "-o", "--output") {
			return "sort writes output to a file", "file-write"
		}
	case "tree":
		// -R reruns tree with "-o 00Tree.html" in every directory.
		if opts, _ := parseOpts(args, treeSpec); has(opts, "-o", "--output", "-R") {
			return "tree writes output to a file", "file-write"
		}
	case "uniq":
		if uniqWritesFile(args) {
			return "uniq writes output to a file", "file-write"
		}
	case "file":
		if opts, _ := parseOpts(args, fileSpec); has(opts, "-C", "--compile") {
			return "file compiles a magic database", "file-write"
		}
	case "date":
		if opts, _ := parseOpts(args, dateSpec); has(opts, "-s", "--set") {
			return "date changes the system clock", "system-time"
		}
	case "sed":
		if opts, _ := parseOpts(args, sedSpec); has(opts, "-f", "--file") {
			return "sed executes commands loaded from a script file", "project-code-execution"
		}
	}
	return "", ""
}

// uniqWritesFile: uniq INPUT OUTPUT writes OUTPUT.
func uniqWritesFile(args []string) bool {
	_, operands := parseOpts(args, uniqSpec)
	return len(operands) >= 2 && operands[1] != "-"
}

// hasShortFlag reports a short-option cluster containing one of letters;
// for "i" also --in-place (with or without a suffix, abbreviated or not:
// sed takes "--i" for --in-place).
func hasShortFlag(args []string, letters ...string) bool {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") || a == "--" {
			continue
		}
		if strings.HasPrefix(a, "--") {
			if slices.Contains(letters, "i") && isLong(a, "--in-place") {
				return true
			}
			continue
		}
		for _, l := range letters {
			if strings.Contains(a[1:], l) {
				return true
			}
		}
	}
	return false
}

// hasPrefix reports whether args start with want.
func hasPrefix(args []string, want ...string) bool {
	if len(args) < len(want) {
		return false
	}
	for i, w := range want {
		if args[i] != w {
			return false
		}
	}
	return true
}

func uvChangesDependencies(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "add", "remove", "sync", "lock":
		return true
	}
	return hasPrefix(args, "pip", "install") || hasPrefix(args, "tool", "install")
}

func nodeChangesDependencies(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "install", "i", "ci", "add", "update", "upgrade", "remove":
		return true
	}
	return hasPrefix(args, "audit", "fix")
}

// sensitiveTextRes is step 10, over the whole candidate.
// They are compiled on first use, like every pattern of this package, so
// that a process that reviews no command pays nothing for them.
var sensitiveTextRes = sync.OnceValue(func() []sensitiveText {
	return []sensitiveText{
		{regexp.MustCompile(`(?is)(?:^|[\s/])\.env(?:[.\s/]|$)`), "touches environment files"},
		{regexp.MustCompile(`(?is)(?:^|[\s/])config\.yaml(?:[\s/]|$)`), "touches config.yaml"},
	}
})

type sensitiveText struct {
	re     *regexp.Regexp
	reason string
}

func promptableText(cmd string) (string, string) {
	for _, p := range sensitiveTextRes() {
		if p.re.MatchString(cmd) {
			return p.reason, "sensitive-path"
		}
	}
	return "", ""
}
