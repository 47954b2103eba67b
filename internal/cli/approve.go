package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	"golang.org/x/term"

	"github.com/demiurge/demiurge/effect"
)

// newApprover returns the approver for --approve. "deny" denies every
// request that needs approval; "all" approves each once (a deny policy or a
// Host block is decided before the approver is asked, so it never overrides
// them); "ask" prompts on the terminal. The default is ask when stdin is a
// terminal and deny otherwise.
func newApprover(mode string, streams IO) (effect.Approver, error) {
	if mode == "" {
		mode = "deny"
		if f, ok := streams.In.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			mode = "ask"
		}
	}
	switch mode {
	case "deny":
		return fixedApprover(effect.DecisionDeny), nil
	case "all":
		return fixedApprover(effect.DecisionAllowOnce), nil
	case "ask":
		return &promptApprover{in: bufio.NewReader(streams.In), streams: streams}, nil
	}
	return nil, usageError("--approve must be ask, deny or all, got %q", mode)
}

type fixedApprover string

func (a fixedApprover) Approve(context.Context, effect.ApprovalRequest) (string, error) {
	return string(a), nil
}

// promptApprover asks the operator on the terminal, one question at a time.
// End of input or an unreadable answer is a denial.
type promptApprover struct {
	mu      sync.Mutex // serialises questions
	in      *bufio.Reader
	streams IO
}

func (a *promptApprover) Approve(ctx context.Context, req effect.ApprovalRequest) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fmt.Fprintf(a.streams.Err, "\nApproval needed: %s (risk %s", req.Summary, req.Risk)
	if req.Capability != "" {
		fmt.Fprintf(a.streams.Err, ", capability %s", req.Capability)
	}
	fmt.Fprintf(a.streams.Err, ")\n")
	if req.Target != "" {
		fmt.Fprintf(a.streams.Err, "  target: %s\n", req.Target)
	}
	if len(req.Preview) > 0 {
		if b, err := json.Marshal(req.Preview); err == nil {
			fmt.Fprintf(a.streams.Err, "  arguments: %s\n", b)
		}
	}
	for _, n := range req.Notes {
		fmt.Fprintf(a.streams.Err, "  note: %s\n", n)
	}
	fmt.Fprintf(a.streams.Err, "  [1] allow once  [2] allow for this session  [3] deny\n> ")
	type answer struct {
		line string
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		line, err := a.in.ReadString('\n')
		ch <- answer{line, err}
	}()
	select {
	case <-ctx.Done():
		return effect.DecisionDeny, ctx.Err()
	case ans := <-ch:
		if ans.err != nil && ans.line == "" {
			return effect.DecisionDeny, nil
		}
		return parseDecision(ans.line), nil
	}
}

// parseDecision maps an operator's answer; anything unrecognised is deny.
func parseDecision(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "y", "yes", "allow", "approve", "once":
		return effect.DecisionAllowOnce
	case "2", "a", "always", "session", "always_allow_for_session":
		return effect.DecisionAllowSession
	}
	return effect.DecisionDeny
}
