package cmdguard

import (
	"strconv"
	"strings"
	"testing"
)

// manyTexts returns a command with n distinct substitutions.
func manyTexts(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("echo $(echo " + strconv.Itoa(i) + ") ")
	}
	return b.String()
}

// TestReviewBudgetExhaustion covers each way out of the budget: nesting
// deeper than maxDepth, more than maxTexts texts, more than maxBytes bytes.
// Each is prompted as complex-shell, or blocked when the flattened reading
// is destructive, and none is ever allowed.
func TestReviewBudgetExhaustion(t *testing.T) {
	evals := func(n int, payload string) string { return strings.Repeat("eval ", n) + payload }
	subs := func(n int, payload string) string {
		return "echo " + strings.Repeat("$(", n) + payload + strings.Repeat(")", n)
	}
	big := "echo $(echo " + strings.Repeat("x", maxBytes) + ")"
	tests := []struct {
		name, cmd string
		block     bool
	}{
		{"eval depth at the limit", evals(maxDepth-1, "rm -rf /"), true},
		{"eval depth past the limit", evals(maxDepth+8, "rm -rf /"), true},
		{"eval depth past the limit, benign", evals(maxDepth+8, "ls"), false},
		{"substitution depth past the limit", subs(maxDepth+8, "rm -rf /"), true},
		{"substitution depth past the limit, benign", subs(maxDepth+8, "ls"), false},
		{"find -exec depth past the limit", strings.Repeat("find . -exec ", maxDepth+8) + "rm -rf /", true},
		{"find -exec depth past the limit, benign", strings.Repeat("find . -exec ", maxDepth+8) + "ls", false},
		{"too many texts", manyTexts(maxTexts+10) + "; echo $(rm -rf /)", true},
		{"too many texts, quoted payload", manyTexts(maxTexts+10) + `; echo "$(rm -rf /)"`, true},
		{"too many texts, benign", manyTexts(maxTexts + 10), false},
		{"too many bytes", big + "; echo $(shutdown now)", true},
		{"too many bytes, benign", big, false},
		{"too many texts, sudo -S", manyTexts(maxTexts+10) + "; echo $(sudo -S id)", true},
	}
	for _, tt := range tests {
		v := Review(tt.cmd)
		switch {
		case tt.block && v.Action != Block:
			t.Errorf("%s: %s %s %q, want block", tt.name, v.Action, v.RuleKey, v.Reason)
		case !tt.block && (v.Action != Prompt || v.RuleKey != "complex-shell" || !v.Exact ||
			v.Reason != "command is too large or too deeply nested to review"):
			t.Errorf("%s: %s %s %q exact=%v, want exact complex-shell", tt.name, v.Action, v.RuleKey, v.Reason, v.Exact)
		}
	}
	// Just within the budget the payload is found by the real analysis.
	a := newAnalysis()
	if h := a.hardlineIn(manyTexts(maxTexts/4)+"; echo $(rm -rf /)", 0); !h.found() || a.exhausted {
		t.Fatalf("within budget: %+v exhausted=%v", h, a.exhausted)
	}
	a = newAnalysis()
	a.hardlineIn(manyTexts(maxTexts), 0)
	if !a.exhausted || a.texts <= maxTexts {
		t.Fatalf("texts=%d exhausted=%v", a.texts, a.exhausted)
	}
}

// TestFlattenedWindow: the last look judges a command by the words that
// follow it, up to flatWindow of them.
func TestFlattenedWindow(t *testing.T) {
	a := newAnalysis()
	near := "rm -rf " + strings.Repeat("x ", flatWindow-2) + "/"
	far := "rm -rf " + strings.Repeat("x ", flatWindow) + "/"
	if !a.flattenedHardline(near).found() {
		t.Error("target within the window not found")
	}
	if a.flattenedHardline(far).found() {
		t.Error("target past the window found")
	}
	if h := a.flattenedHardline("echo 'x'; echo $(mkfs /dev/sda)"); h.key != "mkfs" {
		t.Errorf("flattened substitution: %+v", h)
	}
	if h := a.flattenedHardline(":(){ :|:& };:"); h.key != "fork-bomb" {
		t.Errorf("flattened text rule: %+v", h)
	}
	if h := a.flattenedHardline("echo x; sudo -k id"); h.found() {
		t.Errorf("sudo without -S: %+v", h)
	}
}

// TestBudgetIsFinal: once a budget is spent, nothing more is analysed, at
// any depth, so the cost of a review never exceeds it.
func TestBudgetIsFinal(t *testing.T) {
	rm := []string{"rm", "-rf", "/"}
	a := newAnalysis()
	a.exhausted = true
	if h := a.hardlineIn("rm -rf /", 0); h.found() || a.texts != 0 {
		t.Errorf("exhausted analysis went on: %+v texts=%d", h, a.texts)
	}
	a = newAnalysis()
	if h := a.hardlineIn("rm -rf /", maxDepth+1); h.found() || !a.exhausted || a.texts != 0 {
		t.Errorf("too deep: %+v exhausted=%v texts=%d", h, a.exhausted, a.texts)
	}
	a = newAnalysis()
	a.texts = maxTexts
	if h := a.hardlineIn("rm -rf /", 0); h.found() || !a.exhausted {
		t.Errorf("past maxTexts: %+v", h)
	}
	a = newAnalysis()
	a.bytes = maxBytes
	if h := a.hardlineIn("rm -rf /", 0); h.found() || !a.exhausted {
		t.Errorf("past maxBytes: %+v", h)
	}
	a = newAnalysis()
	if h := a.wordsHardline(rm, maxDepth+1); h.found() || !a.exhausted {
		t.Errorf("wordsHardline too deep: %+v", h)
	}
	a = newAnalysis()
	a.texts = maxTexts
	if h := a.wordsHardline(rm, 0); h.found() || !a.exhausted {
		t.Errorf("wordsHardline past maxTexts: %+v", h)
	}
	a = newAnalysis()
	if h := a.wordsHardline(rm, maxDepth); !h.found() || a.exhausted {
		t.Errorf("wordsHardline at maxDepth: %+v", h)
	}
	a = newAnalysis()
	a.texts = maxTexts - 1
	if h := a.hardlineIn("rm -rf /", maxDepth); h.found() || !a.exhausted {
		// The text itself fits, its command does not.
		t.Errorf("last text: %+v", h)
	}
}
