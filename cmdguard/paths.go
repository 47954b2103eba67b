package cmdguard

// pathRules is the first of the per-segment rules: a command that names a
// sensitive file or a path outside the workspace is prompted under
// sensitive-path or path-outside-workspace, and always Exact, before any
// coarse rule key (file-delete, file-write, ...) can be considered. A
// session grant for "rm build.log" must never cover "rm -rf ../victim": the
// operator approved what they saw, not the category.
func pathRules(segments [][]string, cmd string) (string, string) {
	optVals := make([][]string, len(segments))
	for i, words := range segments {
		optVals[i] = optionPathValues(words)
		write := safeKind(words) != kindRead
		for _, v := range optVals[i] {
			if guardSensitive(v, write) {
				return "option reads a sensitive path", "sensitive-path"
			}
		}
		for _, w := range words {
			if sensitiveWord(w, write) {
				return "touches sensitive path", "sensitive-path"
			}
		}
	}
	// Step 10: the whole text, so a sensitive name inside a quoted
	// script (sh -c 'cat .env') is seen as well.
	if reason, key := promptableText(cmd); key != "" {
		return reason, key
	}
	for i, words := range segments {
		for _, v := range optVals[i] {
			if reason := outsideReason(v); reason != "" {
				return reason, "path-outside-workspace"
			}
		}
		for _, w := range words {
			for _, c := range pathCandidates(w) {
				if reason := outsideReason(c); reason != "" {
					return reason, "path-outside-workspace"
				}
			}
		}
	}
	return "", ""
}

// optionPathValues returns the values of the options of a segment's
// command that name a file it reads (rg -f, grep --exclude-from, date -r,
// ...), parsed with the command's own option grammar so that a value glued
// inside a cluster ("-nf/etc/passwd") is found.
func optionPathValues(words []string) []string {
	idx, name := effectiveCommand(words)
	var out []string
	for i, w := range words[:idx] {
		if baseName(w) == "env" {
			out = append(out, values(optsOf(words[i+1:idx], envSpec), "-C", "--chdir")...)
		}
	}
	if name == "" {
		return out
	}
	return append(out, commandPathValues(name, words[idx+1:])...)
}

// commandPathValues: the path-valued options of one command.
func commandPathValues(name string, args []string) []string {
	switch name {
	case "rg":
		return values(optsOf(args, rgSpec), "-f", "--file", "--ignore-file")
	case "grep":
		return values(optsOf(args, grepSpec), "-f", "--file", "--exclude-from")
	case "file":
		return values(optsOf(args, fileSpec), "-f", "-m", "--files-from", "--magic-file")
	case "date":
		return values(optsOf(args, dateSpec), "-f", "-r", "--file", "--reference")
	case "du":
		return values(optsOf(args, duSpec), "-X", "--exclude-from", "--files0-from")
	case "sort":
		return values(optsOf(args, sortSpec), "-T", "--temporary-directory", "--random-source", "--files0-from", "-o", "--output")
	case "wc":
		return values(optsOf(args, wcSpec), "--files0-from")
	case "tree":
		return values(optsOf(args, treeSpec), "-o", "--output")
	case "git":
		return gitPathValues(args)
	}
	return nil
}

// gitPathValues: the path-valued options of the read-only git commands.
func gitPathValues(args []string) []string {
	if len(args) == 0 {
		return nil
	}
	sub := args[1:]
	switch args[0] {
	case "grep":
		return values(optsOf(sub, gitGrepSpec), "-f", "--file")
	case "diff", "log", "show":
		return values(optsOf(sub, gitDiffSpec), "-O", "--output")
	case "ls-files":
		return values(optsOf(sub, gitLsSpec), "-X", "--exclude-from", "--pathspec-from-file")
	}
	return nil
}
