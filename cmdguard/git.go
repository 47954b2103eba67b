package cmdguard

import "strings"

// gitExactOptions are git options that are also prefixes of an option the
// guard treats as dangerous; git takes an exact name over an abbreviation,
// so "--text" is diff's -a, not --textconv.
var gitExactOptions = map[string]bool{"--text": true}

// gitLong reports whether a git argument names one of the long options:
// exactly or as an abbreviation (git's parse-options accepts any
// unambiguous prefix, and the guard counts ambiguous ones too).
func gitLong(a string, canonical ...string) bool {
	name, _, _ := strings.Cut(a, "=")
	return !gitExactOptions[name] && isLong(a, canonical...)
}

// promptableGit judges the git commands and options that run commands,
// destroy work, write files or reach the network.
func promptableGit(args []string) (string, string) {
	if len(args) == 0 {
		return "", ""
	}
	for _, a := range args {
		// A %G placeholder in a --format/--pretty verifies signatures, as
		// --show-signature does: git runs the configured gpg program.
		if gitLong(a, "--ext-diff", "--textconv", "--show-signature", "--open-files-in-pager") || strings.Contains(a, "%G") {
			return "git executes a configured external command", "project-code-execution"
		}
	}
	sub, rest := args[0], args[1:]
	if sub == "grep" && has(optsOf(rest, gitGrepSpec), "-O") {
		return "git executes a configured external command", "project-code-execution"
	}
	switch {
	case sub == "reset" && anyGitLong(rest, "--hard"):
		return "git reset --hard destroys worktree changes", "git-destructive"
	case sub == "clean" && anyDashContains(rest, "f"):
		return "git clean force deletes untracked files", "git-destructive"
	case sub == "push" && pushForces(rest):
		return "git force push rewrites remote history", "git-force-push"
	case sub == "branch" && branchForceDeletes(rest):
		return "git branch -D force deletes a branch", "git-destructive"
	}
	if anyGitLong(rest, "--output") {
		return "git command writes output to a file", "file-write"
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

func anyGitLong(args []string, canonical ...string) bool {
	for _, a := range args {
		if gitLong(a, canonical...) {
			return true
		}
	}
	return false
}

func anyDashContains(args []string, letters string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "-") && strings.ContainsAny(a, letters) {
			return true
		}
	}
	return false
}

// pushForces: a push that can drop remote history: --force and its
// variants, -f in a cluster, a "+refspec", and the pushes that delete
// remote refs (--delete, -d, --mirror, --prune, ":ref").
func pushForces(args []string) bool {
	for _, a := range args {
		switch {
		case gitLong(a, "--force", "--force-with-lease", "--force-if-includes", "--delete", "--mirror", "--prune"):
			return true
		case strings.HasPrefix(a, "--"):
		case strings.HasPrefix(a, "-") && strings.ContainsAny(a, "fd"):
			return true
		case len(a) > 1 && (a[0] == '+' || a[0] == ':'):
			return true
		}
	}
	return false
}

// branchForceDeletes: -D, or delete and force together (-d -f, -df,
// --delete --force).
func branchForceDeletes(args []string) bool {
	del, force := false, false
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "--"):
			del = del || gitLong(a, "--delete")
			force = force || gitLong(a, "--force")
		case strings.HasPrefix(a, "-"):
			if strings.Contains(a, "D") {
				return true
			}
			del = del || strings.Contains(a, "d")
			force = force || strings.Contains(a, "f")
		}
	}
	return del && force
}
