package turn

import (
	"cmp"
	"context"
	"time"

	"github.com/demiurge/demiurge"
)

// CompactLeaseWait bounds how long a manual compaction waits for a turn of
// the session (in any Host process) to end before it gives up.
const CompactLeaseWait = 30 * time.Second

// CompactRequest asks for one manual compaction (/compact, demiurge
// sessions compact).
type CompactRequest struct {
	SessionID string
	Scope     demiurge.PrincipalScope // zero: the local operator
	// Focus is what the summary should keep in particular ("" none).
	Focus string
	// Provider and Model are the --provider and --model choices (""
	// or "auto": the session's, then the core's).
	Provider, Model string
}

// Compact summarises the older part of a session with the session's own
// model, protecting its newest DefaultProtectTurns turns, and records the
// summary and the new cutoff in one transaction. It takes the session's
// lease first, so no turn of the session runs meanwhile in any Host
// process and no other compaction does; it waits at most
// CompactLeaseWait for it (then ECONFLICT). A session with no more turns
// than it protects is Skipped with Reason NotEnoughHistory and nothing
// written. A summariser that fails or answers nothing writes nothing: the
// error is returned and the session is as it was. ENOTFOUND for a session
// the scope may not see.
func (x *Execution) Compact(ctx context.Context, req CompactRequest) (CompactResult, error) {
	ctx, leave, err := x.adm.enter(ctx)
	if err != nil {
		return CompactResult{}, err
	}
	defer leave()
	if req.Scope.Authority == "" {
		req.Scope = demiurge.OperatorScope("")
	}
	sess, err := x.d.Sessions.Lookup(ctx, req.SessionID)
	if err != nil {
		return CompactResult{}, err
	}
	if req.Scope.Authority != demiurge.AuthorityOperator && !req.Scope.Allows(sess.ID) {
		return CompactResult{}, demiurge.Errorf(demiurge.ENOTFOUND, "session not found: %s", sess.ID)
	}
	snap, err := x.d.Cores.Load(ctx, sess.CoreID)
	if err != nil {
		return CompactResult{}, err
	}
	rm, err := x.d.Providers.Resolve(ctx, ProviderChoice{
		Flag: cmp.Or(req.Provider, sess.Provider), Model: cmp.Or(req.Model, sess.Model),
		CoreProvider: snap.Core.Manifest.Model.Provider, CoreModel: snap.Core.Manifest.Model.ModelName,
		CoreModelOptions: snap.Core.Manifest.Model.ModelOptions,
	})
	if err != nil {
		return CompactResult{}, err
	}
	win, err := newWindow(rm.Limits, snap.Core.Manifest.Model, x.calib.of(sess.ID, rm.Model))
	if err != nil {
		return CompactResult{}, err
	}

	release, err := x.queue.acquire(ctx, sess.ID)
	if err != nil {
		return CompactResult{}, demiurge.WrapError(demiurge.ECANCELED, err, "stopped waiting for session %s", sess.ID)
	}
	defer release()
	holder := demiurge.NewID("compact")
	lctx, cancel := context.WithTimeout(ctx, CompactLeaseWait)
	_, err = x.d.Store.AcquireSessionLeaseWith(lctx, sess.ID, holder, x.d.HostID, nil)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return CompactResult{}, err
		}
		return CompactResult{}, demiurge.WrapError(demiurge.ECONFLICT, err, "session %s is busy: a turn of it is still running after %s; try again when it has ended", sess.ID, CompactLeaseWait)
	}

	c := &compactor{x: x, provider: rm.Provider, model: rm.Model, win: win, sessionID: sess.ID}
	res, batch, err := c.summarise(ctx, req.Focus, compactManual)
	var first []demiurge.EventBatch
	if err == nil && batch != nil {
		first = []demiurge.EventBatch{*batch}
	}
	// The summary, the cutoff and the release are one transaction.
	if _, rerr := x.d.Store.ReleaseSessionLeaseWith(ctx, sess.ID, holder, x.d.HostID, first); rerr != nil {
		return CompactResult{}, rerr
	}
	if err != nil {
		return CompactResult{}, sanitizeError(err, x.d.Providers.Secrets())
	}
	x.d.Logger.Info("session compacted", "session_id", sess.ID, "skipped", res.Skipped, "compacted", res.Compacted, "chunks", res.Chunks)
	return res, nil
}
