package slash

import (
	"context"
	"time"
)

// Outcome is what a command asks the UI to show and do. Several parts may
// be set at once: the UI shows Notice first, then opens Picker or Confirm
// (never both), then applies Action.
type Outcome struct {
	// Notice is markdown for the transcript ("" none), shown as the
	// command's output.
	Notice string
	// Level is how the notice is shown: LevelInfo for command output.
	Level Level
	// Picker, when set, asks the user to choose one item.
	Picker *Picker
	// Confirm, when set, asks a yes/no question.
	Confirm *Confirm
	// Action is what the UI does after showing the rest.
	Action Action
	// SessionID is the session of ActionNewSession (the id the fresh
	// session is to get) and of ActionResume.
	SessionID string
}

// Level is the level of a notice.
type Level int

// Notice levels.
const (
	LevelInfo Level = iota
	LevelWarning
	LevelError
)

// Action is a change of the UI's own state that only the UI can make.
type Action int

// Actions.
const (
	// ActionNone changes nothing.
	ActionNone Action = iota
	// ActionExit ends the UI the way Ctrl-D on an empty composer does:
	// the running turn is cancelled and waited for, then the UI exits.
	ActionExit
	// ActionNewSession makes Outcome.SessionID the UI's session: the next
	// message starts it (turn.Request NewSession with NewSessionID), and
	// the transcript is cleared. The UI forgets the session it leaves
	// (host.ForgetSession).
	ActionNewSession
	// ActionResume makes the existing session Outcome.SessionID the UI's
	// session: the transcript shows its history and the next message
	// continues it. The UI forgets the session it leaves.
	ActionResume
)

// Picker asks the user to choose one of Items. Escape closes it without a
// choice (nothing is done).
type Picker struct {
	// Title names what is chosen ("Resume session").
	Title string
	// Items are shown in order; the first is selected initially.
	Items []Item
	// OnPick runs the choice (an Item's ID); its outcome is shown like a
	// command's. It may block (call it off the UI's goroutine).
	OnPick func(ctx context.Context, id string) (Outcome, error)
}

// Item is one row of a picker.
type Item struct {
	ID      string
	Title   string
	Preview string    // a line of detail ("" none)
	Time    time.Time // zero: no time shown
}

// Confirm asks a yes/no question. Escape, or no answer, is No: a confirm
// never does its Yes part unless the user said yes.
type Confirm struct {
	Question string
	// OnYes runs when the user confirms; OnNo (nil: nothing) when they
	// decline or close the question. Both may block.
	OnYes func(ctx context.Context) (Outcome, error)
	OnNo  func(ctx context.Context) (Outcome, error)
}
