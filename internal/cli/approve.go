package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/demiurge/demiurge/effect"
)

// approvalMode resolves --approve: "" is ask when stdin is a terminal and
// deny otherwise; anything but ask, deny or all is a usage error.
func approvalMode(mode string, in io.Reader) (string, error) {
	switch mode {
	case "":
		if isTerminal(in) {
			return "ask", nil
		}
		return "deny", nil
	case "ask", "deny", "all":
		return mode, nil
	}
	return "", usageError("--approve must be ask, deny or all, got %q", mode)
}

// isTerminal reports whether r is a terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newApprover returns the approver of `demiurge run` for --approve. "deny"
// denies every request that needs approval; "all" approves each once (a
// deny policy or a Host block is decided before the approver is asked, so it
// never overrides them); "ask" asks on the terminal, reading the answers
// from stdin through one reader started at the first question.
func newApprover(mode string, streams IO) (effect.Approver, error) {
	mode, err := approvalMode(mode, streams.In)
	if err != nil {
		return nil, err
	}
	var once sync.Once
	var lines *lineSource
	return approverFor(mode, func() *lineSource {
		once.Do(func() { lines = newLineSource(streams.In) })
		return lines
	}, streams.Err, nil), nil
}

// approverFor is the approver of a resolved mode; ask reads its answers
// from lines and writes its questions to out, calling before (if set)
// first.
func approverFor(mode string, lines func() *lineSource, out io.Writer, before func()) effect.Approver {
	switch mode {
	case "all":
		return fixedApprover(effect.DecisionAllowOnce)
	case "ask":
		return &promptApprover{lines: lines, out: out, before: before}
	}
	return fixedApprover(effect.DecisionDeny)
}

type fixedApprover string

func (a fixedApprover) Approve(context.Context, effect.ApprovalRequest) (string, error) {
	return string(a), nil
}

// promptApprover asks the operator, one question at a time, and reads the
// answer as the next input line. The end of the input, a cancelled turn and
// any answer it does not recognise are a denial.
type promptApprover struct {
	mu     sync.Mutex // serialises questions
	lines  func() *lineSource
	out    io.Writer
	before func() // ends the chat's open output line before a question
}

const approvalChoices = "  [y] allow once  [a] allow for this session  [n] deny  [f] full view\n"

func (a *promptApprover) Approve(ctx context.Context, req effect.ApprovalRequest) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.before != nil {
		a.before()
	}
	writeQuestion(a.out, req, false)
	for {
		fmt.Fprint(a.out, approvalChoices+"? ")
		l, err := a.lines().Next(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			fmt.Fprintln(a.out, "\n(turn cancelled: denied)")
			return effect.DecisionDeny, ctx.Err()
		case err != nil:
			fmt.Fprintln(a.out, "\n(end of input: denied)")
			return effect.DecisionDeny, nil
		}
		answer := strings.ToLower(strings.TrimSpace(l.text))
		if answer == "f" || answer == "full" {
			writeQuestion(a.out, req, true)
			continue
		}
		d := parseDecision(answer)
		fmt.Fprintf(a.out, "(%s)\n", decisionWords[d])
		return d, nil
	}
}

var decisionWords = map[string]string{
	effect.DecisionAllowOnce:    "allowed once",
	effect.DecisionAllowSession: "allowed for this session",
	effect.DecisionDeny:         "denied",
}

// writeQuestion prints what is asked: summary, risk, capability, target,
// arguments (shortened unless full) and notes. Every value is made
// printable: a tool's arguments come from the model, and control
// characters must not reach the operator's terminal.
func writeQuestion(w io.Writer, req effect.ApprovalRequest, full bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "\nApproval needed: %s (risk %s", printable(req.Summary), printable(req.Risk))
	if req.Capability != "" {
		fmt.Fprintf(&b, ", capability %s", printable(req.Capability))
	}
	b.WriteString(")\n")
	if req.Target != "" {
		fmt.Fprintf(&b, "  target: %s\n", printable(req.Target))
	}
	if len(req.Preview) > 0 {
		args := previewJSON(req.Preview, full)
		if !full {
			args = shorten(args, 240)
		}
		fmt.Fprintf(&b, "  arguments: %s\n", printable(args))
	}
	for _, n := range req.Notes {
		fmt.Fprintf(&b, "  note: %s\n", printable(n))
	}
	io.WriteString(w, b.String())
}

func previewJSON(v map[string]any, indent bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("  ", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return "(not printable)"
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// parseDecision maps an operator's answer (the keys of the chat UI, their
// numbers, or the words); anything unrecognised, Esc included, is deny.
func parseDecision(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "y", "yes", "allow", "approve", "once":
		return effect.DecisionAllowOnce
	case "2", "a", "always", "session", "always_allow_for_session":
		return effect.DecisionAllowSession
	}
	return effect.DecisionDeny
}

// printable escapes control characters (C0, DEL, C1: the ones a terminal
// acts on), keeping newlines and tabs of multi-line values.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if r != '\n' && r != '\t' && (unicode.IsControl(r) || r == utf8.RuneError) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		case unicode.IsControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// shorten cuts s to at most n runes, marking the cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
