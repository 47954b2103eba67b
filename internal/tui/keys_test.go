package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
)

// reply reads the decision a question got, failing if it got none.
func reply(t *testing.T, q *question) string {
	t.Helper()
	select {
	case d := <-q.reply:
		return d
	default:
		t.Fatal("the question was not answered")
		return ""
	}
}

func unanswered(t *testing.T, q *question) {
	t.Helper()
	select {
	case d := <-q.reply:
		t.Fatalf("the question was answered %q", d)
	default:
	}
}

// Each approval key gives its decision: y/1 allow once, a/2 allow for
// the session, n/3 and Esc deny, Enter the selected choice.
func TestApprovalKeys(t *testing.T) {
	cases := []struct {
		keys []string
		want string
	}{
		{[]string{"y"}, effect.DecisionAllowOnce},
		{[]string{"1"}, effect.DecisionAllowOnce},
		{[]string{"a"}, effect.DecisionAllowSession},
		{[]string{"2"}, effect.DecisionAllowSession},
		{[]string{"n"}, effect.DecisionDeny},
		{[]string{"3"}, effect.DecisionDeny},
		{[]string{"esc"}, effect.DecisionDeny},
		{[]string{"enter"}, effect.DecisionAllowOnce},
		{[]string{"down", "enter"}, effect.DecisionAllowSession},
		{[]string{"down", "down", "enter"}, effect.DecisionDeny},
		{[]string{"up", "enter"}, effect.DecisionDeny},
		{[]string{"f", "x", "q", "enter"}, effect.DecisionAllowOnce},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.keys, ","), func(t *testing.T) {
			m, _ := newTestModel(t, 80, 24, Config{})
			seq := startTestTurn(m, "write")
			q := writeQuestion("c1")
			send(m, toolStart(seq, "c1", "write_file", writeArgs), approvalMsg{seq: seq, q: q})
			press(m, c.keys[:len(c.keys)-1]...)
			unanswered(t, q)
			press(m, c.keys[len(c.keys)-1])
			if got := reply(t, q); got != c.want {
				t.Fatalf("decision %q, want %q", got, c.want)
			}
			if len(m.questions) != 0 {
				t.Fatal("the panel stays open after the answer")
			}
		})
	}
}

// Several questions are asked one at a time, in order; the keys typed
// while the panel is open never reach the composer.
func TestApprovalQueueOneAtATime(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, Config{})
	seq := startTestTurn(m, "write twice")
	q1, q2 := writeQuestion("c1"), writeQuestion("c2")
	q2.req.Target = "second.txt"
	send(m, approvalMsg{seq: seq, q: q1}, approvalMsg{seq: seq, q: q2})
	if !strings.Contains(screen(m), "(1 more waiting)") {
		t.Fatalf("the waiting question is not mentioned:\n%s", screen(m))
	}
	press(m, "y")
	if reply(t, q1) != effect.DecisionAllowOnce {
		t.Fatal("first answer")
	}
	unanswered(t, q2)
	if !strings.Contains(screen(m), "second.txt") {
		t.Fatalf("the second question is not shown next:\n%s", screen(m))
	}
	press(m, "n")
	if reply(t, q2) != effect.DecisionDeny {
		t.Fatal("second answer")
	}
	if !m.comp.empty() {
		t.Fatalf("panel keys reached the composer: %q", m.comp.value())
	}
}

// Closing the UI denies every open question, and a question withdrawn by
// its cancelled turn leaves the panel.
func TestQuitDeniesOpenQuestions(t *testing.T) {
	m, eng := newTestModel(t, 80, 24, Config{})
	seq := startTestTurn(m, "write")
	q1, q2 := writeQuestion("c1"), writeQuestion("c2")
	send(m, approvalMsg{seq: seq, q: q1}, approvalMsg{seq: seq, q: q2})
	send(m, approvalGoneMsg{q: q2})
	if len(m.questions) != 1 {
		t.Fatalf("%d questions open after one was withdrawn", len(m.questions))
	}
	cmd := send(m, hangupMsg{})
	if reply(t, q1) != effect.DecisionDeny {
		t.Fatal("an open question was not denied at exit")
	}
	if !isQuit(cmd) {
		t.Fatal("hangup does not quit")
	}
	if len(eng.cancelled) != 1 || eng.cancelled[0] != seq {
		t.Fatalf("the running turn was not cancelled: %v", eng.cancelled)
	}
	// A question arriving after the exit started is denied at once.
	q3 := writeQuestion("c3")
	send(m, approvalMsg{seq: seq, q: q3})
	if reply(t, q3) != effect.DecisionDeny {
		t.Fatal("a late question was not denied")
	}
}

func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

// Ctrl-C interrupts a running turn, which ends cancelled with the
// session going on; with nothing running it clears a draft, and on an
// empty composer it exits when pressed twice. Ctrl-D exits on an idle,
// empty composer only.
func TestCtrlCAndCtrlD(t *testing.T) {
	m, eng := newTestModel(t, 80, 24, Config{})
	seq := startTestTurn(m, "slow")
	if isQuit(press(m, "ctrl+c")) {
		t.Fatal("Ctrl-C during a turn quit")
	}
	if len(eng.cancelled) != 1 {
		t.Fatalf("cancelled %v", eng.cancelled)
	}
	if isQuit(press(m, "ctrl+c")) || len(eng.cancelled) != 1 {
		t.Fatal("a second Ctrl-C while the turn ends quit or cancelled again")
	}
	if isQuit(press(m, "ctrl+d")) {
		t.Fatal("Ctrl-D during a turn quit")
	}
	send(m, done(seq, demiurge.TurnCancelled))
	if !strings.Contains(screen(m), "turn interrupted") || m.running != nil {
		t.Fatalf("the interrupted turn is not reported:\n%s", screen(m))
	}

	typeText(m, "draft")
	if isQuit(press(m, "ctrl+c")) || !m.comp.empty() {
		t.Fatal("Ctrl-C on a draft does not clear it")
	}
	if isQuit(press(m, "ctrl+c")) {
		t.Fatal("one Ctrl-C on an empty composer quit")
	}
	if !strings.Contains(screen(m), "Press Ctrl-C again to exit") {
		t.Fatal("no hint that another Ctrl-C exits")
	}
	press(m, "x", "backspace") // any other key disarms
	if isQuit(press(m, "ctrl+c")) {
		t.Fatal("Ctrl-C after another key quit")
	}
	if !isQuit(press(m, "ctrl+c")) {
		t.Fatal("Ctrl-C twice on an empty composer does not quit")
	}

	m2, _ := newTestModel(t, 80, 24, Config{})
	typeText(m2, "x")
	if isQuit(press(m2, "ctrl+d")) {
		t.Fatal("Ctrl-D on a draft quit")
	}
	press(m2, "backspace")
	if !isQuit(press(m2, "ctrl+d")) {
		t.Fatal("Ctrl-D on an idle empty composer does not quit")
	}
}

// /exit and /quit quit; other commands go to the engine.
func TestExitCommands(t *testing.T) {
	for _, c := range []string{"/exit", "/quit", "/QUIT"} {
		m, eng := newTestModel(t, 80, 24, Config{})
		typeText(m, c)
		if !isQuit(press(m, "enter")) {
			t.Fatalf("%s does not quit", c)
		}
		if len(eng.commands) != 0 {
			t.Fatalf("%s went to the engine", c)
		}
	}
	m, eng := newTestModel(t, 80, 24, Config{})
	typeText(m, "/help")
	press(m, "enter")
	if len(eng.commands) != 1 || eng.commands[0] != "/help" {
		t.Fatalf("commands %v", eng.commands)
	}
}
