package tui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// Model is the terminal UI's state: one bubbletea model that owns the
// transcript, the composer, the open questions and the turn in progress.
// Everything runs on bubbletea's goroutine; the engine reports back by
// messages.
type Model struct {
	eng engine
	th  theme
	md  markdown
	now func() time.Time

	width, height int

	tr       transcript
	comp     composer
	sugg     suggestPanel
	display  toolDisplay
	busyMode string // interrupt or queue

	// The session of the next turn: sessionID, or a fresh one when
	// newSession is set ("" and false: the UI's conversation).
	sessionID    string
	newSession   bool
	newSessionID string

	seq     int // the last turn's sequence number
	running *runningTurn
	queue   []string // messages waiting for the running turn, oldest first

	questions []*question // open approval questions; the first is shown
	approval  approvalPanel
	picker    *pickerState
	confirm   *confirmState

	status    statusInfo
	exitArmed bool // Ctrl-C on an idle, empty composer once; again exits
	quitting  bool
}

// runningTurn is the turn in progress.
type runningTurn struct {
	seq       int
	turnID    string
	cancelled bool // an interrupt was asked
	// streaming is the reply entry text deltas go to (nil: the next delta
	// starts one; a tool call ends it).
	streaming *entry
	streamed  strings.Builder // every delta of the turn
	cards     map[string]*entry
}

// Config is how a Model starts.
type Config struct {
	Settings    Settings
	ToolDisplay string // quiet, summary or full
	BusyMode    string // interrupt or queue
	SessionID   string // resume this session ("" the UI's conversation)
	Status      statusInfo
	Now         func() time.Time // clock of card durations (nil: time.Now)
	// startNotices are errors to show first (a core that did not load).
	startNotices []string
}

func newModel(eng engine, cfg Config) *Model {
	m := &Model{
		eng:       eng,
		th:        newTheme(cfg.Settings),
		now:       cfg.Now,
		tr:        newTranscript(),
		display:   displaySummary,
		busyMode:  "interrupt",
		sessionID: cfg.SessionID,
		status:    cfg.Status,
		width:     80,
		height:    24,
	}
	if m.now == nil {
		m.now = time.Now
	}
	if d, ok := parseToolDisplay(cfg.ToolDisplay); ok {
		m.display = d
	}
	if cfg.BusyMode == "queue" {
		m.busyMode = "queue"
	}
	m.status.sessionID = cfg.SessionID
	for _, n := range cfg.startNotices {
		m.notice(levelError, n)
	}
	return m
}

// Init loads the history of the resumed session, or of the CLI
// conversation the first message continues.
func (m *Model) Init() tea.Cmd {
	if m.sessionID == "" {
		m.eng.loadConversation()
		return nil
	}
	m.eng.loadHistory(m.sessionID)
	m.eng.refresh(m.sessionID)
	m.eng.watch(m.sessionID)
	return nil
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.PasteMsg:
		if !m.panelOpen() {
			m.exitArmed = false
			m.comp.insert(msg.Content)
		}
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.scrollUp(3)
		case tea.MouseWheelDown:
			m.scrollDown(3)
		}
	case turnAdmittedMsg:
		m.turnAdmitted(msg)
	case streamMsg:
		m.stream(msg)
	case toolMsg:
		m.toolCall(msg)
	case approvalMsg:
		m.ask(msg)
	case approvalGoneMsg:
		m.withdraw(msg.q)
	case deliveryMsg:
		m.delivery(msg)
	case turnDoneMsg:
		return m, m.turnDone(msg)
	case outcomeMsg:
		return m, m.applyOutcome(msg.out, msg.err)
	case historyMsg:
		m.history(msg)
	case sessionReadMsg:
		if msg.sessionID == m.sessionID {
			m.status.tasks = msg.tasks
			if !msg.usage.IsZero() {
				m.status.tokensKnown = true
				m.status.sessionIn, m.status.sessionOut = msg.usage.InputTokens, msg.usage.OutputTokens
			}
		}
	case stepMsg:
		if m.current(msg.seq) != nil && !msg.usage.IsZero() {
			s := &m.status
			s.tokensKnown = true
			s.lastIn, s.lastOut = msg.usage.InputTokens, msg.usage.OutputTokens
			s.sessionIn += msg.usage.InputTokens
			s.sessionOut += msg.usage.OutputTokens
		}
	case noticeMsg:
		m.notice(msg.level, msg.text)
	case *callMsg:
		msg.run(m)
		if m.quitting {
			return m, tea.Quit
		}
	case hangupMsg:
		return m, m.quit()
	}
	return m, nil
}

// quit ends the UI: every open question is denied and the running turn
// cancelled (the runner waits for it before returning).
func (m *Model) quit() tea.Cmd {
	m.quitting = true
	for _, q := range m.questions {
		q.answer(denyDecision)
	}
	m.questions = nil
	if m.running != nil && !m.running.cancelled {
		m.running.cancelled = true
		m.eng.cancelTurn(m.running.seq)
	}
	return tea.Quit
}

func (m *Model) panelOpen() bool {
	return len(m.questions) > 0 || m.picker != nil || m.confirm != nil
}

func (m *Model) notice(level noticeLevel, text string) {
	m.tr.add(&entry{kind: kindNotice, level: level, text: clean(text)})
}

func (m *Model) renderCtx() *renderCtx {
	return &renderCtx{th: &m.th, md: &m.md, width: m.innerWidth(), display: m.display}
}

// innerWidth is the width inside the one-column side padding.
func (m *Model) innerWidth() int { return max(m.width-2, 1) }

func (m *Model) scrollUp(n int) {
	m.tr.scrollUp(n, m.transcriptHeight(), m.renderCtx())
}

func (m *Model) scrollDown(n int) {
	m.tr.scrollDown(n, m.transcriptHeight(), m.renderCtx())
}
