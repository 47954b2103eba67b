// Package tui is the interactive terminal UI of `demiurge` and
// `demiurge chat` on a terminal (spec surfaces §2, built natively on
// bubbletea, lipgloss and glamour): a transcript of streamed, markdown
// rendered replies and live tool cards, the approval panel, a multiline
// composer with history and completion, and a status line.
//
// # Contract
//
// Run takes an open Host and returns once the operator exits (Ctrl-C twice
// or Ctrl-D on an idle, empty composer, /exit, /quit), the terminal hangs
// up (SIGHUP) or the context ends. Whichever way, the running turn is
// cancelled and recorded as cancelled, every open approval question is
// denied, and every goroutine the package started has stopped; the caller
// closes the Host.
//
// Approvals fail closed: a question is allowed only by an explicit answer
// (y/a, 1/2, Enter on an allow choice); Esc, n, 3, a cancelled turn and a
// closed UI are denials. Everything drawn that came from a model, a tool or
// a file is stripped of control characters first, and arguments are shown
// as the turn redacted them.
//
// # Structure
//
// Model is the bubbletea model; it never blocks. bridge.go is the one
// adapter between the Host API (Host.Run with its Stream, OnToolCall,
// Approver and Route callbacks, CancelTurn, the session reads) and the
// model's messages: its goroutines post messages, and Run waits for all of
// them. slashcmds.go is where the slash commands plug in.
//
// Rendering is cached: each transcript entry keeps its lines per width and
// version, a streaming reply renders only its unfinished tail again, and a
// frame renders only the entries on screen, walking from the bottom or
// the scroll anchor. The UI schedules nothing while idle: the screen
// changes only on input and on the engine's messages, and an idle UI
// writes nothing to the terminal. What still wakes it is bubbletea's
// renderer, whose frame ticker (v2.1.1 has no idle mode; WithFPS only sets
// its rate, kept at the default 60 for keystroke latency) finds the frame
// unchanged and draws nothing, and the Host's own polls (cross-process
// cancels, completions, deliveries, the heartbeat): about one percent of
// a core together.
package tui
