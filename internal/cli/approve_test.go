package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge/effect"
)

func askWith(lines *lineSource, out *bytes.Buffer) *promptApprover {
	return &promptApprover{lines: func() *lineSource { return lines }, out: out}
}

var writeReq = effect.ApprovalRequest{Tool: "write_file", Summary: "write_file a.txt", Risk: "medium",
	Capability: "fs.write", Target: "a.txt", Preview: map[string]any{"path": "a.txt", "content": "x"}}

func TestPromptAnswers(t *testing.T) {
	for answer, want := range map[string]string{
		"y": effect.DecisionAllowOnce, "Y": effect.DecisionAllowOnce, "1": effect.DecisionAllowOnce, "yes": effect.DecisionAllowOnce,
		"a": effect.DecisionAllowSession, "2": effect.DecisionAllowSession,
		"n": effect.DecisionDeny, "3": effect.DecisionDeny, "\x1b": effect.DecisionDeny, "": effect.DecisionDeny,
		"ls -la": effect.DecisionDeny, "yy": effect.DecisionDeny,
	} {
		var out bytes.Buffer
		s := newLineSource(strings.NewReader(answer + "\n"))
		d, err := askWith(s, &out).Approve(context.Background(), writeReq)
		s.Close()
		if err != nil || d != want {
			t.Errorf("answer %q: %q, %v; want %q", answer, d, err, want)
		}
	}
}

// "f" shows the full arguments and asks again; the answer after it counts.
func TestPromptFullViewAsksAgain(t *testing.T) {
	var out bytes.Buffer
	s := newLineSource(strings.NewReader("f\ny\n"))
	defer s.Close()
	long := strings.Repeat("z", 500)
	req := writeReq
	req.Preview = map[string]any{"path": "a.txt", "content": long}
	d, err := askWith(s, &out).Approve(context.Background(), req)
	if err != nil || d != effect.DecisionAllowOnce {
		t.Fatalf("decision %q, %v", d, err)
	}
	shown := out.String()
	if strings.Count(shown, "[y] allow once") != 2 || !strings.Contains(shown, long) {
		t.Fatalf("full view not shown, or not asked again:\n%s", shown)
	}
	if first := shown[:strings.Index(shown, "[y] allow once")]; strings.Contains(first, long) {
		t.Fatal("the first question shows the arguments in full")
	}
}

func TestPromptEndOfInputDenies(t *testing.T) {
	var out bytes.Buffer
	s := newLineSource(strings.NewReader(""))
	defer s.Close()
	d, err := askWith(s, &out).Approve(context.Background(), writeReq)
	if err != nil || d != effect.DecisionDeny || !strings.Contains(out.String(), "end of input: denied") {
		t.Fatalf("decision %q, %v, output %q", d, err, out.String())
	}
}

// A question whose turn is cancelled leaves nothing reading: the answer
// typed afterwards goes to the next question, not to a reader left behind.
func TestPromptCancelledQuestionDoesNotTakeTheNextAnswer(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	s := newLineSource(r)
	defer s.Close()
	var out bytes.Buffer
	a := askWith(s, &out)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		d, err := a.Approve(ctx, writeReq)
		if d != effect.DecisionDeny {
			err = errors.New("cancelled question decided " + d)
		}
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // let it wait
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled question: %v", err)
	}
	w.WriteString("y\n")
	d, err := a.Approve(context.Background(), writeReq)
	if err != nil || d != effect.DecisionAllowOnce {
		t.Fatalf("next question got %q, %v; want the answer typed for it", d, err)
	}
}

// Values from the model reach the terminal without control characters.
func TestQuestionIsPrintable(t *testing.T) {
	var out bytes.Buffer
	req := writeReq
	req.Summary = "write_file \x1b[2Jevil\u009b31m"
	req.Target = "a\x07.txt"
	req.Notes = []string{"note\x1b]0;title\x07"}
	req.Preview = map[string]any{"content": "\x1b[31mred\u009b"}
	writeQuestion(&out, req, true)
	for _, c := range []string{"\x1b", "\x07", "\u009b"} {
		if strings.Contains(out.String(), c) {
			t.Fatalf("question carries control character %q:\n%q", c, out.String())
		}
	}
	if !strings.Contains(out.String(), `\u001b[2Jevil`) {
		t.Fatalf("escaped form missing:\n%s", out.String())
	}
}

func TestApprovalMode(t *testing.T) {
	for flag, want := range map[string]string{"": "deny", "ask": "ask", "deny": "deny", "all": "all"} {
		got, err := approvalMode(flag, strings.NewReader(""))
		if err != nil || got != want {
			t.Errorf("--approve %q off a terminal: %q, %v; want %q", flag, got, err, want)
		}
	}
	if _, err := approvalMode("yes", strings.NewReader("")); err == nil || !strings.Contains(err.Error(), "--approve must be ask, deny or all") {
		t.Fatalf("bad mode: %v", err)
	}
}
