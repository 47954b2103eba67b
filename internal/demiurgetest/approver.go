package demiurgetest

import (
	"context"
	"slices"
	"sync"

	"github.com/demiurge/demiurge/effect"
)

// Approver answers every approval request with one decision and records
// the requests. It is safe for concurrent use.
type Approver struct {
	decision string

	mu   sync.Mutex // guards reqs
	reqs []effect.ApprovalRequest
}

var _ effect.Approver = (*Approver)(nil)

// NewApprover returns an approver that answers decision
// (effect.DecisionAllowOnce, DecisionAllowSession or DecisionDeny).
func NewApprover(decision string) *Approver { return &Approver{decision: decision} }

// Approve records req and answers the approver's decision.
func (a *Approver) Approve(_ context.Context, req effect.ApprovalRequest) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reqs = append(a.reqs, req)
	return a.decision, nil
}

// Requests are the requests asked so far, in order.
func (a *Approver) Requests() []effect.ApprovalRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.reqs)
}

// Asked is how many requests were asked.
func (a *Approver) Asked() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.reqs)
}
