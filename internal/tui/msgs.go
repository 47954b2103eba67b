package tui

import (
	"context"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/turn"
)

// engine is the host side of the UI; bridge.go implements it over
// *host.Host. Every method returns at once: work runs on goroutines the
// engine owns, and its results come back to the model as messages.
type engine interface {
	// startTurn runs one turn; its events arrive tagged with spec.seq.
	startTurn(spec turnSpec)
	// cancelTurn cancels turn seq; a turn that ended is left alone.
	cancelTurn(seq int)
	// command runs a slash command line (not /exit or /quit).
	command(line string)
	// callback runs a picker's or confirm's choice.
	callback(fn func(context.Context) (outcome, error))
	// complete lists Tab completions of a partial command line; it runs
	// on the UI goroutine and may read m.
	complete(m *Model, input string) []string
	// suggest ranks the commands matching a partial command name, cheaply
	// (no Host reads): the suggestion panel asks on every frame.
	suggest(token string) []suggestion
	// loadHistory reads a session's transcript and its tool calls.
	loadHistory(sessionID string)
	// loadConversation finds the session of the CLI conversation (the
	// one a turn without a session id continues) and reads it like
	// loadHistory; nothing comes back when there is none.
	loadConversation()
	// refresh reads what the status line shows of a session.
	refresh(sessionID string)
	// forget drops what the Host holds for a session the UI leaves.
	forget(sessionID string)
	// watch follows a session's live feed (background task completions,
	// schedule runs) and asks its child agents' approval questions in the
	// panel; the previous session's watch ends.
	watch(sessionID string)
}

// turnSpec is one turn to run.
type turnSpec struct {
	seq          int
	text         string
	sessionID    string // "" with newSession false: the UI's conversation
	newSession   bool
	newSessionID string
}

// The messages the engine posts.
type (
	turnAdmittedMsg struct {
		seq               int
		sessionID, turnID string
	}
	streamMsg struct {
		seq   int
		delta string
	}
	toolMsg struct {
		seq int
		ev  turn.ToolCallEvent
		at  time.Time
	}
	approvalMsg struct {
		seq int // 0: not a turn of this UI (a background task's question)
		q   *question
	}
	// approvalGoneMsg withdraws a question whose asker stopped waiting.
	approvalGoneMsg struct{ q *question }
	deliveryMsg     struct {
		seq int
		out demiurge.Outbound
	}
	turnDoneMsg struct {
		seq int
		res turn.Result
		err error
	}
	outcomeMsg struct {
		out outcome
		err error
	}
	// historyMsg is a session's transcript and the tool calls of its
	// turns (by turn id); conversation marks the CLI conversation's
	// session read at start, shown only if nothing happened meanwhile.
	historyMsg struct {
		sessionID    string
		msgs         []demiurge.Message
		calls        map[string][]turn.ToolCallEvent
		conversation bool
		err          error
	}
	// sessionReadMsg is what the status line shows of a session: its
	// running background tasks and its token usage so far.
	sessionReadMsg struct {
		sessionID string
		tasks     int
		usage     demiurge.Usage
	}
	// stepMsg is one model step's provider usage.
	stepMsg struct {
		seq   int
		usage demiurge.Usage
	}
	// noticeMsg is news from outside a turn: a background task finished,
	// a schedule ran.
	noticeMsg struct {
		level noticeLevel
		text  string
	}
	// hangupMsg: the terminal is gone (SIGHUP).
	hangupMsg struct{}
)

// callMsg runs fn on the UI goroutine for a caller on another one (the
// slash commands' Env), closing done after. A caller that gave up
// abandons it first, and fn does not run: it would write what the caller
// no longer guards.
type callMsg struct {
	fn        func(*Model)
	done      chan struct{}
	mu        sync.Mutex
	abandoned bool
}

func (c *callMsg) run(m *Model) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.abandoned {
		c.fn(m)
	}
	close(c.done)
}

func (c *callMsg) abandon() {
	c.mu.Lock()
	c.abandoned = true
	c.mu.Unlock()
}

// outcome is what a slash command asks the UI to show and do.
type outcome struct {
	notice    string // markdown ("" none)
	level     noticeLevel
	picker    *pickerSpec
	confirm   *confirmSpec
	action    action
	sessionID string // of actionNewSession and actionResume
}

type action int

const (
	actionNone action = iota
	actionExit
	actionNewSession
	actionResume
)

type pickerSpec struct {
	title  string
	items  []pickItem
	onPick func(ctx context.Context, id string) (outcome, error)
}

type pickItem struct {
	id, title, preview string
	at                 time.Time
}

type confirmSpec struct {
	question    string
	onYes, onNo func(ctx context.Context) (outcome, error)
}

// suggestion is one row of the suggestion panel.
type suggestion struct{ name, usage, description, group string }

// statusInfo is what the status line shows besides the UI's own state.
type statusInfo struct {
	coreID, revision string
	provider, model  string
	sessionID        string
	tasks            int // background tasks of the session still running
	// Token counts, when the provider reported usage.
	tokensKnown           bool
	lastIn, lastOut       int64
	sessionIn, sessionOut int64
}
