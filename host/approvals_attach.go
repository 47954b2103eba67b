package host

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
)

// Approvals of background work. A session's own turns are asked through
// the Approver of their turn.Request. The child agents a session starts
// (delegate_task, ctx.agents.spawn, and their own children) run as tasks
// with no caller of their own; their questions are put to the interactive
// approver attached to the session that started them (AttachApprover), or,
// when none is, to the one attached to that session's parent, and so on up
// the lineage. With nothing attached anywhere up the line a question is
// denied as it always was ("no interactive approval provider
// configured"). Background terminal commands are approved when the
// foreground call starts them, and the evolver's runs keep their fixed
// policy, so neither asks here.

// DefaultBackgroundApprovalTimeout bounds how long a background question
// waits for its answer: nobody may be looking at the screen, and a child
// agent must not wait forever.
const DefaultBackgroundApprovalTimeout = 10 * time.Minute

// Errors of a background question that got no answer; each is a denial.
var (
	errApproverDetached = errors.New("the interactive approver was detached before it answered")
	errApprovalTimeout  = errors.New("nobody answered the approval question in time")
)

// sessionLinks holds the attached approvers and the live lineage of the
// child agents this Host runs. It is safe for concurrent use.
type sessionLinks struct {
	timeout time.Duration

	mu        sync.Mutex
	approvers map[string][]*attachment // session → attached, newest last
	parents   map[string]string        // running child session → parent session
}

// attachment is one AttachApprover call; ctx ends when it is detached.
type attachment struct {
	a      effect.Approver
	ctx    context.Context
	cancel context.CancelCauseFunc
}

func newSessionLinks() *sessionLinks {
	return &sessionLinks{
		timeout:   DefaultBackgroundApprovalTimeout,
		approvers: map[string][]*attachment{},
		parents:   map[string]string{},
	}
}

// AttachApprover makes a the interactive approver of the background work
// of sessionID: the approval questions of the child agents the session
// started (and of their children) are asked through a until detach is
// called. When several are attached to one session the newest answers.
// Detaching cancels a question a is still answering, which is then
// denied; so is one unanswered after DefaultBackgroundApprovalTimeout, and
// one whose child turn is cancelled. detach is safe to call more than
// once.
func (h *Host) AttachApprover(sessionID string, a effect.Approver) (detach func()) {
	return h.links.attach(sessionID, a)
}

func (l *sessionLinks) attach(sessionID string, a effect.Approver) func() {
	ctx, cancel := context.WithCancelCause(context.Background())
	at := &attachment{a: a, ctx: ctx, cancel: cancel}
	l.mu.Lock()
	l.approvers[sessionID] = append(l.approvers[sessionID], at)
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		list := l.approvers[sessionID]
		for i, x := range list {
			if x == at {
				list = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(l.approvers, sessionID)
		} else {
			l.approvers[sessionID] = list
		}
		l.mu.Unlock()
		cancel(errApproverDetached)
	}
}

// child records that child runs for parent until the returned func is
// called.
func (l *sessionLinks) child(child, parent string) func() {
	l.mu.Lock()
	l.parents[child] = parent
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		delete(l.parents, child)
		l.mu.Unlock()
	}
}

// parent is the session a running child agent's session was started by.
func (l *sessionLinks) parent(child string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.parents[child]
}

// approverFor is the attachment nearest to sessionID up the lineage, nil
// for none.
func (l *sessionLinks) approverFor(sessionID string) *attachment {
	l.mu.Lock()
	defer l.mu.Unlock()
	for at, n := sessionID, 0; at != "" && n < maxLineage; at, n = l.parents[at], n+1 {
		if list := l.approvers[at]; len(list) > 0 {
			return list[len(list)-1]
		}
	}
	return nil
}

// forwarder is the Approver of a child agent's turn: it asks whatever is
// attached for the child's parent session when the question comes.
func (l *sessionLinks) forwarder(parentSessionID string) effect.Approver {
	return forwardingApprover{links: l, from: parentSessionID}
}

type forwardingApprover struct {
	links *sessionLinks
	from  string
}

func (f forwardingApprover) Approve(ctx context.Context, req effect.ApprovalRequest) (string, error) {
	at := f.links.approverFor(f.from)
	if at == nil {
		return "", effect.ErrNoOperator
	}
	ctx, cancel := context.WithTimeoutCause(ctx, f.links.timeout, errApprovalTimeout)
	defer cancel()
	// Detaching ends the question too.
	ctx, cancelDetached := context.WithCancelCause(ctx)
	defer cancelDetached(nil)
	stop := context.AfterFunc(at.ctx, func() { cancelDetached(context.Cause(at.ctx)) })
	defer stop()

	answer, err := at.a.Approve(ctx, req)
	if cause := context.Cause(ctx); cause != nil {
		// The runtime shows this message as the denial's reason.
		code := demiurge.ECANCELED
		if errors.Is(cause, errApprovalTimeout) {
			code = demiurge.ETIMEOUT
		}
		return "", demiurge.WrapError(code, cause, "background approval of %s: %s", req.Tool, cause.Error())
	}
	return answer, err
}
