// Package cmdguard reviews terminal commands before the Host runs them
// (tool-runtime spec §7.4, §7.5). It is pure policy: no I/O, no state, and
// it imports only the standard library and golang.org/x/text.
//
// # Usage
//
//	v := cmdguard.Review(command)
//	switch v.Action {
//	case cmdguard.Block:  // refuse: "terminal command blocked: " + v.Reason; no approval is asked
//	case cmdguard.Prompt: // ask, caching approvals under cmdguard.CacheKeyFor(v, command, exec)
//	case cmdguard.Allow:  // a literal read-only command (ls, cat, grep, git status, ...)
//	}
//
// # Contract
//
// Review is a guard, not a shell: it contains what it recognises and asks
// about everything else.
//
//   - Allow is given only to literal read-only commands (§7.4's list: pwd ls
//     cat head tail wc sort uniq cut tr nl stat file du df tree date whoami
//     uname printf echo sleep true false rg grep find, sed -n, git status
//     diff log show rev-parse ls-files grep describe and the listing shapes
//     of git remote/branch/tag/worktree), joined at most by &&, ; or a
//     pipe, with no substitution, expansion, glob, redirection, background
//     operator, inline environment assignment, path outside the workspace,
//     sensitive file, or option that writes, executes or reads elsewhere.
//   - Running project code (tests, builds, package scripts, ./anything,
//     interpreters) is always Prompt, as is every command the guard does
//     not know (rule key unknown-command) and every construct it does not
//     model (complex-shell): it fails closed.
//   - Destructive commands are Block, wherever the guard can see them: as
//     the command, behind wrappers (sudo, env, exec, command, nice, nohup,
//     setsid, time, timeout, xargs, busybox, doas, stdbuf, ionice, chroot),
//     inside $(...), backticks, <(...), sh -c, eval, env -S, su -c, find
//     -exec, "echo ... | sh", in any segment of ; && || | & chains, in
//     subshells and groups, and when spelt with quotes, escapes, $'...',
//     ${IFS}, brace expansion or variables assigned earlier in the text.
//     Rule keys: rm-critical-path, mkfs, raw-block-device, sudo-stdin,
//     shutdown, kill-all, fork-bomb, permission-critical-path.
//
// Every command is reviewed in up to three forms: as the shell will run it,
// with terminal escape sequences stripped, and Unicode-normalised (NFKC,
// look-alike characters folded, invisible characters removed). The strictest
// verdict wins, so text that merely looks like a safe command to a reader
// cannot be allowed, and text that looks destructive is blocked.
//
// Verdicts carry the rule key that decided and the §7.5 fingerprint of the
// command. CacheKeyFor builds the approval cache key; Exact verdicts (the
// fingerprinted keys of §7.5, filename expansion, inline environment
// overlays, and any command of more than one segment, whose key names only
// its first risky segment) are bound to the exact command, cwd, overlay and
// options.
//
// # Concurrency
//
// All functions are safe for concurrent use; they share only read-only
// tables.
//
// # Failure modes
//
// Review never fails and never panics. Nesting is followed 32 levels deep;
// a command whose nested texts exceed the review budget (2048 distinct texts
// or 4 MiB in all) is prompted as complex-shell, or blocked if a flattened
// reading of it is destructive. A NUL byte makes any command complex-shell
// (or a block when the rest is destructive).
package cmdguard
