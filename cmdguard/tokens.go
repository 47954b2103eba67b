package cmdguard

import (
	"regexp"
	"strings"
)

// effectiveCommand skips leading assignments and the env/time/command
// wrappers with their dash options and assignments (§7.4 step 9).
func effectiveCommand(words []string) (int, string) {
	i := 0
	for i < len(words) && isAssignment(words[i]) {
		i++
	}
	for i < len(words) {
		switch baseName(words[i]) {
		case "env", "time", "command":
		default:
			return i, baseName(words[i])
		}
		i++
		for i < len(words) && (strings.HasPrefix(words[i], "-") || isAssignment(words[i])) {
			i++
		}
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

// promptableTokens is §7.4 step 9: the first rule that matches any segment,
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
	if reason, key := promptableEmbeddedPath(name, args); key != "" {
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
	if name == "rg" {
		if opts, _ := parseOpts(args, rgSpec); has(opts, "--pre") {
			return "ripgrep executes a preprocessor command", "project-code-execution"
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
	for _, w := range words {
		if isSensitiveToken(w) {
			return "touches sensitive path", "sensitive-path"
		}
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
		if opts, _ := parseOpts(args, treeSpec); has(opts, "-o", "--output") {
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

// promptableEmbeddedPath: options whose value is a file the tool reads.
func promptableEmbeddedPath(name string, args []string) (string, string) {
	var vals []string
	switch name {
	case "rg":
		opts, _ := parseOpts(args, rgSpec)
		vals = values(opts, "-f", "--file", "--exclude-from", "--ignore-file")
	case "grep":
		opts, _ := parseOpts(args, grepSpec)
		vals = values(opts, "-f", "--file", "--exclude-from")
	case "file":
		opts, _ := parseOpts(args, fileSpec)
		vals = values(opts, "-f", "-m", "--files-from", "--magic-file")
	case "date":
		opts, _ := parseOpts(args, dateSpec)
		vals = values(opts, "-f", "-r", "--file", "--reference")
	case "du":
		opts, _ := parseOpts(args, duSpec)
		vals = values(opts, "-X", "--exclude-from", "--files0-from")
	case "sort":
		opts, _ := parseOpts(args, sortSpec)
		vals = values(opts, "--random-source", "--files0-from")
	case "wc":
		opts, _ := parseOpts(args, wcSpec)
		vals = values(opts, "--files0-from")
	case "git":
		if len(args) == 0 {
			return "", ""
		}
		sub := args[1:]
		switch args[0] {
		case "grep":
			opts, _ := parseOpts(sub, gitGrepSpec)
			vals = values(opts, "-f", "--file")
		case "diff", "log", "show":
			opts, _ := parseOpts(sub, gitDiffSpec)
			vals = values(opts, "-O")
		case "ls-files":
			opts, _ := parseOpts(sub, gitLsSpec)
			vals = values(opts, "-X", "--exclude-from", "--pathspec-from-file")
		}
	}
	for _, v := range vals {
		if isSensitiveToken(v) {
			return "option reads a sensitive path", "sensitive-path"
		}
		if reason := unsafePathReason([]string{v}); reason != "" {
			return reason, "path-outside-workspace"
		}
	}
	return "", ""
}

// uniqWritesFile: uniq INPUT OUTPUT writes OUTPUT.
func uniqWritesFile(args []string) bool {
	_, operands := parseOpts(args, optSpec{short: "fsw", long: []string{"--skip-fields", "--skip-chars", "--check-chars", "--group", "--all-repeated"}})
	return len(operands) >= 2 && operands[1] != "-"
}

func promptableGit(args []string) (string, string) {
	if len(args) == 0 {
		return "", ""
	}
	for _, a := range args {
		if abbrev(a, "--ext-diff", 5) || abbrev(a, "--textconv", 7) ||
			abbrev(a, "--show-signature", 8) || abbrev(a, "--open-files-in-pager", 4) {
			return "git executes a configured external command", "project-code-execution"
		}
	}
	sub, rest := args[0], args[1:]
	if sub == "grep" {
		if opts, _ := parseOpts(rest, gitGrepSpec); has(opts, "-O") {
			return "git executes a configured external command", "project-code-execution"
		}
	}
	switch {
	case sub == "reset" && anyOf(rest, "--hard"):
		return "git reset --hard destroys worktree changes", "git-destructive"
	case sub == "clean" && anyDashContains(rest, "f"):
		return "git clean force deletes untracked files", "git-destructive"
	case sub == "push" && pushForces(rest):
		return "git force push rewrites remote history", "git-force-push"
	case sub == "branch" && anyOf(rest, "-D"):
		return "git branch -D force deletes a branch", "git-destructive"
	}
	for _, a := range rest {
		if abbrev(a, "--output", 5) {
			return "git command writes output to a file", "file-write"
		}
	}
	switch {
	case sub == "clone" || sub == "fetch" || sub == "pull" || sub == "push" || sub == "ls-remote":
		return "git command accesses a remote repository", "network-command"
	case sub == "remote" && len(rest) > 0 && (rest[0] == "update" || rest[0] == "prune" || rest[0] == "show"):
		return "git remote command accesses a remote repository", "network-command"
	case (sub == "remote" || sub == "branch" || sub == "tag" || sub == "worktree") && !isSafeGit(args):
		return "git command mutates repository state", "repository-mutation"
	}
	return "", ""
}

// abbrev reports whether the word a is the long option canonical, with or
// without "=value", or an abbreviation of it at least minLen long (git and
// GNU tools accept unambiguous abbreviations).
func abbrev(a, canonical string, minLen int) bool {
	if !strings.HasPrefix(a, "--") {
		return false
	}
	name, _, _ := strings.Cut(a, "=")
	return name == canonical || (len(name) >= minLen && strings.HasPrefix(canonical, name))
}

func anyDashContains(args []string, letters string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "-") && strings.ContainsAny(a, letters) {
			return true
		}
	}
	return false
}

func pushForces(args []string) bool {
	for _, a := range args {
		if a == "--force" || a == "-f" || strings.HasPrefix(a, "--force-") ||
			(strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "f")) ||
			(strings.HasPrefix(a, "+") && len(a) > 1) {
			return true
		}
	}
	return false
}

// hasShortFlag reports a short-option cluster containing one of letters;
// for "i" also --in-place (with or without a suffix).
func hasShortFlag(args []string, letters ...string) bool {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") || a == "--" {
			continue
		}
		if strings.HasPrefix(a, "--") {
			if contains(letters, "i") {
				if abbrev(a, "--in-place", 4) {
					return true
				}
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

// Credential locations (§10.2): any component starting ".env" or equal to
// config.yaml or a credential directory, or a credential file name.
var (
	credentialDirs  = map[string]bool{".ssh": true, ".aws": true, ".kube": true}
	credentialFiles = map[string]bool{".netrc": true, ".npmrc": true, ".pgpass": true, ".pypirc": true}
)

// isSensitiveToken reports a word (or the value of --opt=value) naming a
// credential or configuration file.
func isSensitiveToken(w string) bool {
	cand, ok := pathCandidate(w)
	if !ok {
		return false
	}
	parts := pathParts(cand)
	for _, p := range parts {
		p = strings.ToLower(p)
		if strings.HasPrefix(p, ".env") || p == "config.yaml" || credentialDirs[p] {
			return true
		}
	}
	return credentialFiles[strings.ToLower(baseName(cand))]
}

// pathCandidate is the part of a word that may be a path: the word, or the
// value of a --opt=value word; plain options have none.
func pathCandidate(w string) (string, bool) {
	if !strings.HasPrefix(w, "-") {
		return w, true
	}
	_, v, ok := strings.Cut(w, "=")
	return v, ok
}

// pathParts splits a path into its components, dropping empty and "."
// ones.
func pathParts(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// sensitiveTextRes is §7.4 step 10, over the whole candidate.
var sensitiveTextRes = []struct {
	re     *regexp.Regexp
	reason string
}{
	{regexp.MustCompile(`(?is)(?:^|[\s/])\.env(?:[.\s/]|$)`), "touches environment files"},
	{regexp.MustCompile(`(?is)(?:^|[\s/])config\.yaml(?:[\s/]|$)`), "touches config.yaml"},
}

func promptableText(cmd string) (string, string) {
	for _, p := range sensitiveTextRes {
		if p.re.MatchString(cmd) {
			return p.reason, "sensitive-path"
		}
	}
	return "", ""
}
