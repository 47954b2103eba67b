// Package terminal holds the terminal tool and the runner of its
// background commands (terminal.exec tasks).
//
// # Terminal
//
// terminal runs one foreground shell command (bash -c, else /bin/sh -c)
// through Deps.Processes, in a cwd inside the workspace. Before approval
// it checks, in this order and without side effects: secret_bindings
// shape and the exact grant secret.bind:<NAME> of each (a wildcard never
// grants a secret), the command, the cwd (workspace scope as for writes),
// the env overlay names, background (refused: "background terminal
// commands are not available yet"), then the command guard (cmdguard): a
// block is a policy denial that never reaches the operator. A command the
// guard allows, without overlay or bindings, keeps the entry's folded
// policy; anything else is at least prompt, and a call with an overlay or
// bindings is one-shot (never answered by, nor stored as, a session
// grant).
//
// After approval the command gets the allowlisted Host variables only
// (PATH, LANG, LC_ALL, LC_CTYPE, TERM, COLORTERM, TZ and the Windows
// system names), HOME = Deps.PrivateHome(session) (created 0700) and
// TMPDIR, TMP, TEMP inside it, then the overlay, then the bound secrets,
// read through Deps.Getenv only now. A binding's expiry counts from the
// pre-approval check, so a late answer does not lengthen it, and the
// earliest expiry clamps the timeout. Bound values are replaced by
// <redacted:TARGET> in tails and artifacts and join the turn's secret set.
// The result is "exit_code: N" with the bounded tails (spec tool-runtime
// §7.7); a timeout reports exit code 124 and "timed_out: true". A nonzero
// exit is an error with ExecutionStarted true; data carries the audit view
// (names of environment variables, never values).
package terminal
