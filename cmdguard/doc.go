// Package cmdguard reviews terminal commands before the Host runs them. It
// is pure policy: no I/O, no state, and it imports only the standard library
// and golang.org/x/text.
//
// The review is the numbered procedure of the tool-runtime spec, §7.4 (with
// the fingerprint and cache keys of §7.5 and the sensitive names of §10.2);
// comments in this package name its steps by number: step 1 scans for shell
// expansions, step 3 splits the text into segments, step 8 splits a segment
// into words, step 9 matches the promptable rules, step 10 scans the whole
// text for sensitive names.
//
// # Usage
//
//	v := cmdguard.Review(command)
//	switch v.Action {
//	case cmdguard.Block:  // refuse: "terminal command blocked: " + v.Reason; no approval is asked
//	case cmdguard.Prompt: // ask, caching approvals under cmdguard.CacheKeyFor(v, command, exec);
//	                      // v.GrantCoverage() says what a session grant would cover
//	case cmdguard.Allow:  // a literal read-only command (ls, cat, grep, git status, ...)
//	}
//
// # Contract
//
// Review is a guard, not a shell: it contains what it recognises and asks
// about everything else.
//
//   - Allow is given only to literal read-only commands (the spec's list: pwd ls
//     cat head tail wc sort uniq cut tr nl stat file du df tree date whoami
//     uname printf echo sleep true false rg grep find, sed -n, git status
//     diff log show rev-parse ls-files grep describe and the listing shapes
//     of git remote/branch/tag/worktree), joined at most by &&, ; or a
//     pipe, with no substitution, expansion, glob, redirection, background
//     operator, inline environment assignment, path outside the workspace,
//     sensitive file, or option that writes, executes or reads elsewhere.
//     printf -v is not literal: bash evaluates the variable's subscript.
//   - Options are matched as GNU getopt and git match them: clustered short
//     options ("-nf FILE"), "--opt=value" and "--opt value", and every
//     abbreviation of a long option ("sed --i" is --in-place, "sort --o" is
//     --output). An abbreviation that could mean a dangerous option counts
//     as that option, except where an exact option of that name exists
//     ("git diff --text").
//   - Running project code (tests, builds, package scripts, ./anything,
//     interpreters) is always Prompt, as is every command the guard does
//     not know (rule key unknown-command) and every construct it does not
//     model (complex-shell): it fails closed.
//   - Destructive commands are Block wherever bash would run them: as the
//     command, behind wrappers (sudo, env, exec, command, nice, nohup,
//     setsid, time, timeout, xargs, busybox, doas, stdbuf, ionice, chroot,
//     ...; value-taking options skipped with their values), inside $(...),
//     backticks, <(...), ${...} bodies, sh -c (options in any order, "--"
//     included), eval, env -S, su -c, trap, alias, watch, find -exec (also
//     with "{}" standing for find's starting points), in here-documents and
//     here-strings fed to a shell, in what echo, printf or a here-string
//     pipe into a shell or xargs, in any segment of ; && || | & chains,
//     subshells, groups, function bodies and loops, and when spelt with
//     quotes, escapes, $'...', ${IFS}, brace expansion, upper case, or
//     variables assigned earlier in the text (loop variables included).
//     Text bash evaluates as code after quote removal is code: a
//     substitution inside a quoted array subscript or arithmetic expression
//     (printf -v, read, declare and its kin, let, unset, test -v, [[ ]],
//     (( )), $(( )), assignments whose value a later arithmetic context may
//     evaluate) blocks as if it were unquoted.
//     Rule keys: rm-critical-path, mkfs, raw-block-device, sudo-stdin,
//     shutdown, kill-all, fork-bomb, permission-critical-path.
//   - Paths come before rule keys. Sensitive files are exactly those of the
//     file tools (SensitivePath), plus config.yaml, named as a
//     word, an option value ("--file=.env", "-X.netrc"), or a git object
//     path ("HEAD:.env", ":0:id_rsa"); a write also protects pyproject.toml
//     and uv.lock. Any command naming one, or a path outside the workspace
//     (absolute, "~", a ".." component), is prompted as sensitive-path or
//     path-outside-workspace and is always Exact, whatever else it does, so
//     a coarse session grant can never cover it.
//
// Every command is reviewed in up to three forms: as the shell will run it,
// with terminal escape sequences stripped, and Unicode-normalised (NFKC,
// look-alike characters folded, invisible characters removed). The strictest
// verdict wins, so text that merely looks like a safe command to a reader
// cannot be allowed, and text that looks destructive is blocked.
//
// Verdicts carry the rule key that decided and the fingerprint of the
// command. CacheKeyFor builds the approval cache key; Exact verdicts (the
// fingerprinted keys, filename expansion, inline environment
// overlays, the two path keys, and any command of more than one segment,
// whose key names only its first risky segment) are bound to the exact
// command, cwd, overlay and options. GrantCoverage says in one sentence what
// a session grant of a verdict covers.
//
// # Concurrency
//
// All functions are safe for concurrent use; they share only read-only
// tables.
//
// # Failure modes
//
// Review never fails and never panics. Nesting is followed 32 levels deep;
// a command nested deeper, or whose nested texts exceed the review budget
// (2048 distinct texts or 4 MiB in all), is prompted as complex-shell, or
// blocked if a flattened reading of it is destructive. A NUL byte makes any
// command complex-shell (or a block when the rest is destructive).
package cmdguard
