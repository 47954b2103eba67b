package cmdguard

// coarseCoverage says, for each coarse rule key, which commands the guard
// gives that key: a session grant keyed only by the rule key covers all of
// them.
var coarseCoverage = map[string]string{
	"safe-command":           "literal read-only commands (ls, cat, grep, git status, ...)",
	"empty-command":          "empty commands",
	"cwd-change":             "changing the working directory (cd, pushd, popd, env -C)",
	"file-delete":            "deleting files inside the workspace (rm, rmdir, unlink)",
	"file-write":             "writing or changing files inside the workspace (cp, mv, mkdir, touch, chmod, ln, tee, output options)",
	"file-read":              "reading files named in a sed script",
	"find-delete":            "find deleting files inside the workspace",
	"in-place-edit":          "editing files in place (sed -i, perl -i, ruby -i)",
	"project-code-execution": "running workspace or project code (tests, builds, ./scripts, find -exec, external git diff tools)",
	"system-time":            "setting the system clock (date -s)",
	"network-download":       "downloading from the network (curl, wget)",
	"network-command":        "git commands that reach a remote repository (clone, fetch, pull, push, ls-remote)",
	"repository-mutation":    "git commands that change branches, tags, remotes or worktrees",
	"git-destructive":        "git commands that discard work (reset --hard, clean -f, branch -D)",
	"git-force-push":         "git pushes that can drop remote history (--force, +refspec, --delete, --mirror)",
	"dependency-change":      "installing or changing dependencies (pip, uv, npm, cargo, go install)",
	"dependency-exec":        "downloading and running package binaries (npx, pnpm dlx, yarn dlx)",
	"sudo":                   "commands run through sudo",
	"service-control":        "controlling system services (systemctl, service, launchctl)",
	"process-kill":           "killing processes (kill, pkill, killall)",
	"container-lifecycle":    "docker commands",
}

// GrantCoverage says in words what an "allow for this session" answer to
// this verdict covers, as CacheKeyFor keys it. An Exact verdict (or one
// whose rule key is fingerprinted) covers only this exact command, in this
// directory, with these options; a coarse one covers every single command
// the guard gives the same rule key, which by construction names no path
// outside the workspace and no sensitive file. With an environment overlay
// or secret bindings CacheKeyFor binds any grant to the exact command.
func (v Verdict) GrantCoverage() string {
	switch {
	case v.Action == Block:
		return "nothing: a blocked command is refused and cannot be approved"
	case v.Exact || fingerprintedKeys[v.RuleKey]:
		return "this exact command, in this directory, with these options (environment overlay, secret bindings, background, timeout)"
	}
	what, ok := coarseCoverage[v.RuleKey]
	if !ok {
		what = "commands the guard classifies as " + v.RuleKey
	}
	return "any single command the guard classifies as " + v.RuleKey + " (" + what + "), in any directory of the workspace, " +
		"that names no path outside the workspace and no sensitive file, run without an environment overlay or secret bindings"
}
