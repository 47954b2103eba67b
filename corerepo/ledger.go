package corerepo

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/coretree"
	"github.com/demiurge/demiurge/gitrepo"
	"github.com/demiurge/demiurge/internal/filelock"
)

// Ledger is the shared record of the core repository that every Host of
// one runtime ledger follows (the package doc, Several Hosts): the shared
// live revision, and each published revision as a git pack. The runtime
// store on PostgreSQL satisfies it; the composition root wires it.
type Ledger interface {
	// CoreLive returns the shared live revision; ok is false while none
	// is published. It is the one read a turn pays when nothing moved.
	CoreLive(ctx context.Context) (live demiurge.CoreLive, ok bool, err error)
	// CoreRevision returns a published revision; ok is false when the
	// ledger lacks it.
	CoreRevision(ctx context.Context, revision string) (rev demiurge.CoreRevision, ok bool, err error)
	// PublishCore stores the revisions of p and moves the shared live
	// revision from p.Expected to the last of them, in one transaction;
	// ECONFLICT when the shared live revision is not p.Expected.
	PublishCore(ctx context.Context, p demiurge.CorePublication) (demiurge.CoreLive, error)
}

// maxPublishChain bounds the revisions one publication walks back from
// its new live revision to one the ledger holds: the history of a home
// publishing first, or a proposal's review commits.
const maxPublishChain = 10000

// held is the repository lock of a mutation, with the cores whose files
// following the shared live revision changed under it: Unlock releases
// the lock and then hands those cores to Options.OnSwitch.
type held struct {
	r       *Repo
	l       *filelock.Lock
	adopted []string
	moved   bool
}

func (h *held) Unlock() {
	h.l.Unlock()
	if h.moved && h.r.onSwitch != nil {
		h.r.onSwitch(h.adopted)
	}
}

// begin takes the lock of a mutation without waiting (gitrepo Begin: a
// leftover transaction resolved, an inconsistent repository refused) and
// follows the shared live revision, so the mutation starts from it.
func (r *Repo) begin(ctx context.Context) (*held, error) {
	l, err := r.git.Begin()
	if err != nil {
		return nil, err
	}
	return r.follow(ctx, l)
}

// beginWait is begin waiting up to wait for a concurrent mutation.
func (r *Repo) beginWait(ctx context.Context, wait time.Duration) (*held, error) {
	l, err := r.git.LockWait(ctx, wait)
	if err != nil {
		return nil, err
	}
	if err := r.git.Prepare(); err != nil {
		l.Unlock()
		return nil, err
	}
	return r.follow(ctx, l)
}

// follow runs followLocked under the lock l, releasing l on failure.
func (r *Repo) follow(ctx context.Context, l *filelock.Lock) (*held, error) {
	h := &held{r: r, l: l}
	if err := r.followLocked(ctx, h); err != nil {
		l.Unlock()
		return nil, err
	}
	return h, nil
}

// sharedLive is the shared live revision: "" with no ledger or while none
// is published.
func (r *Repo) sharedLive(ctx context.Context) (string, error) {
	if r.ledger == nil {
		return "", nil
	}
	live, ok, err := r.ledger.CoreLive(ctx)
	if err != nil || !ok {
		return "", err
	}
	return live.Revision, nil
}

// followLocked brings the local live revision to the shared one. The
// caller holds the lock on a consistent repository. With no ledger it
// does nothing. While none is published it publishes the local live
// revision and its history (op "init"); a Host that loses that race
// follows the winner. When the shared revision differs from the local
// one, its revisions are imported from the ledger and live switched to
// it, the checkout brought along (op "adopt"); unsaved local edits refuse
// the switch (movedError) unless the checkout already holds the shared
// revision's files.
func (r *Repo) followLocked(ctx context.Context, h *held) error {
	if r.ledger == nil {
		return nil
	}
	shared, ok, err := r.ledger.CoreLive(ctx)
	if err != nil {
		return err
	}
	live, err := r.git.Live()
	if err != nil {
		return err
	}
	if !ok {
		err := r.publishLocked(ctx, "init", coretree.Hash{}, live)
		if demiurge.ErrorCode(err) != demiurge.ECONFLICT {
			return err
		}
		if shared, ok, err = r.ledger.CoreLive(ctx); err != nil || !ok {
			return errors.Join(err, demiurge.Errorf(demiurge.ECONFLICT, "core repository: the shared live revision vanished while it was published"))
		}
	}
	if shared.Revision == live.String() {
		return nil
	}
	target, okHash := coretree.ParseHash(shared.Revision)
	if !okHash {
		return demiurge.Errorf(demiurge.EINTERNAL, "core repository: the shared live revision %q is not a commit id", shared.Revision)
	}
	if err := r.importRevision(ctx, target); err != nil {
		return err
	}
	_, res, err := r.git.ScanLive()
	if err != nil {
		return err
	}
	checkout := true
	if !res.Clean() {
		// The checkout may hold the shared revision already: a save this
		// Host published but did not switch to (it stopped in between), or
		// the same edit made here.
		onTarget, err := r.git.Scan(r.git.LiveCheckout(), target)
		if err != nil {
			return err
		}
		if !onTarget.Clean() {
			return movedError(live, target, res.Changes)
		}
		res, checkout = onTarget, false
	} else {
		res = nil
	}
	affected, err := r.affectedCores(live, target)
	if err != nil {
		return err
	}
	// Previous is the shared one, so that a rollback to "previous" means
	// the same revision on every Host; this Host's own live before the
	// switch when the ledger names none this store holds.
	prev := live
	if p, ok := coretree.ParseHash(shared.Previous); ok && p != target && r.git.HasCommit(p) {
		prev = p
	}
	if err := r.git.SwitchWithPrevious("adopt", live, target, prev, checkout, res); err != nil {
		return err
	}
	h.adopted, h.moved = affected, true
	return nil
}

// importRevision makes the store hold revision target, importing it and
// the ancestors it needs from the ledger, oldest first.
func (r *Repo) importRevision(ctx context.Context, target coretree.Hash) error {
	var chain []demiurge.CoreRevision
	for h := target; !r.git.HasCommit(h); {
		if len(chain) >= maxPublishChain {
			return demiurge.Errorf(demiurge.EINTERNAL, "core repository: shared revision %s has more than %d revisions this Host lacks", gitrepo.Short(target), maxPublishChain)
		}
		rev, ok, err := r.ledger.CoreRevision(ctx, h.String())
		if err != nil {
			return err
		}
		if !ok {
			return demiurge.Errorf(demiurge.ECONFLICT, "core repository: revision %s of the shared live revision %s is not in the runtime ledger", h, target)
		}
		chain = append(chain, rev)
		if rev.Parent == "" {
			break
		}
		next, ok := coretree.ParseHash(rev.Parent)
		if !ok {
			return demiurge.Errorf(demiurge.EINTERNAL, "core repository: the ledger's revision %s names parent %q", h, rev.Parent)
		}
		h = next
	}
	for i := len(chain) - 1; i >= 0; i-- {
		if err := r.git.ImportPack(chain[i].Pack); err != nil {
			return demiurge.WrapError(demiurge.ErrorCode(err), err, "core repository: import shared revision %s: %s", chain[i].Revision, demiurge.ErrorMessage(err))
		}
	}
	if !r.git.HasCommit(target) {
		return demiurge.Errorf(demiurge.EINTERNAL, "core repository: shared revision %s is missing after its import", target)
	}
	if _, err := r.git.Files(target); err != nil {
		return err
	}
	return nil
}

// switchLive moves live from old to new as gitrepo's Switch does, after
// publishing new as the shared live revision (from old): the ledger moves
// first, so a Host that stops between the two finds the shared revision
// ahead of its own and follows it, and a publication that loses to
// another Host's changes nothing here.
func (r *Repo) switchLive(ctx context.Context, op string, old, new coretree.Hash, checkout bool, res *gitrepo.Scan) error {
	if err := r.publishLocked(ctx, op, old, new); err != nil {
		return err
	}
	return r.git.Switch(op, old, new, checkout, res)
}

// publishLocked publishes new as the shared live revision, expected to
// move from old (zero: none published yet), with every revision of new's
// first-parent history back to old, each packed against its parent. With
// no ledger it does nothing. Losing to another Host is ECONFLICT "core
// repository: the shared live revision moved to <rev> (another Host's
// <op>); this <op> was not made: try again".
func (r *Repo) publishLocked(ctx context.Context, op string, old, new coretree.Hash) error {
	if r.ledger == nil {
		return nil
	}
	var revs []demiurge.CoreRevision
	for h := new; h != old; {
		if len(revs) >= maxPublishChain {
			return demiurge.Errorf(demiurge.EINTERNAL, "core repository: revision %s is more than %d revisions from %s", gitrepo.Short(new), maxPublishChain, old)
		}
		c, err := r.git.Commit(h)
		if err != nil {
			return err
		}
		var parent coretree.Hash
		if len(c.Parents) > 0 {
			parent = c.Parents[0]
		}
		pack, n, err := r.git.Pack(h, parent)
		if err != nil {
			return err
		}
		rev := demiurge.CoreRevision{Revision: h.String(), Pack: pack, Objects: n}
		if !parent.IsZero() {
			rev.Parent = parent.String()
		}
		revs = append(revs, rev)
		if parent.IsZero() {
			break
		}
		h = parent
	}
	for i, j := 0, len(revs)-1; i < j; i, j = i+1, j-1 {
		revs[i], revs[j] = revs[j], revs[i]
	}
	p := demiurge.CorePublication{Revisions: revs, Op: op, HostID: r.hostID}
	if !old.IsZero() {
		p.Expected = old.String()
	}
	if _, err := r.ledger.PublishCore(ctx, p); err != nil {
		if demiurge.ErrorCode(err) == demiurge.ECONFLICT && op != "init" {
			return demiurge.WrapError(demiurge.ECONFLICT, err, "core repository: the shared live revision moved while this Host made its %s (%s); nothing was changed: try again", op, demiurge.ErrorMessage(err))
		}
		return err
	}
	return nil
}

// movedError is the refusal to follow the shared live revision over
// unsaved local edits.
func movedError(live, shared coretree.Hash, changes []coretree.Change) error {
	quoted := make([]string, len(changes))
	for i, c := range changes {
		quoted[i] = "'" + c.Path + "'"
	}
	return demiurge.Errorf(demiurge.ECONFLICT, "local agent edits were made on core revision %s, but another Host moved the shared live revision to %s: [%s]; "+
		"they are neither saved nor merged: run `demiurge core discard --yes` to drop them and adopt the shared revision, then make them again",
		gitrepo.Short(live), gitrepo.Short(shared), strings.Join(quoted, ", "))
}

// Follow brings the repository to the shared live revision, as a turn's
// EnsureSaved would, without saving local edits, and returns the live
// revision: what a Host runs when it opens, so it starts on the revision
// the other Hosts run. With no Ledger, or when nothing moved, it only
// reads. Unsaved local edits refuse a move (ECONFLICT, as EnsureSaved).
func (r *Repo) Follow(ctx context.Context) (string, error) {
	shared, err := r.sharedLive(ctx)
	if err != nil {
		return "", err
	}
	live, err := r.Live()
	if err != nil || r.ledger == nil || shared == live {
		return live, err
	}
	l, err := r.beginWait(ctx, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer l.Unlock()
	return r.Live()
}
