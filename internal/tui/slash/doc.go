// Package slash is the terminal UI's slash commands (spec surfaces §2.11):
// their catalog, their completion and what each one does, apart from any
// drawing. It talks to the Host through its methods and to the running UI
// through Env; it never imports the UI's libraries, so the same commands
// can be tested, and driven, without a terminal.
//
// # Contract
//
// The UI
//
//   - lists Specs in /help order and in its suggestion panel (Suggest ranks
//     them for a partial command);
//   - completes the composer line with Complete on Tab;
//   - runs a line that IsCommand with Dispatch, off its own goroutine
//     (Dispatch blocks while a command works: /evolve runs the evolver's
//     turn), cancelling ctx to abandon it;
//   - renders the Outcome: Notice as markdown at Level in the transcript,
//     then Picker or Confirm in place of the composer, then Action. A
//     Picker's OnPick and a Confirm's OnYes/OnNo return a further Outcome,
//     rendered the same way; Escape closes a picker without a choice and
//     answers a confirm No, so nothing a confirm guards happens unless the
//     user said yes;
//   - shows an error of Dispatch or of a callback as an error notice (a
//     *UsageError names the command and its usage);
//   - implements Env: the Host, the core, session and workspace, the live
//     busy mode and tool display, the running turn (Busy, Interrupt) and
//     the queue of messages waiting for it.
//
// The commands change the UI's state only through Env (busy mode, tool
// display, interrupt, the queue) and through Outcome.Action (exit, a new
// or resumed session, which the UI applies: it owns the transcript and the
// session of its next turn). A command that switches the session refuses
// while a turn runs.
//
// # Output
//
// Command output follows the original's texts where the spec gives them
// (the help text, "tool display: <mode>", "busy mode: <mode>", "no turns
// yet", "Session number out of range: <n>", "session not found or not
// authorized", "unknown command: /<name>", ...) and its table format, a
// GitHub table the UI's markdown renderer draws. Everything shown comes
// from the Host's redacted views: stored event payloads, tool results'
// operator and model views, task logs; a provider key is never shown, nor
// where it comes from.
//
// # Evolution
//
// "/evolve <goal>" runs an evolve start (host.EvolveStart), reviews the
// proposal (host.EvolveReview) and shows the review with its diff; when the
// proposal passed its gates a Confirm asks whether to promote it, and yes
// promotes it with the review's token (the user's yes in front of the
// review is the operator's manual review). "/rollback [target]" asks, then
// commits the rollback. Both act on the Host's own core repository, so the
// cores they change drop their cached approvals.
package slash
