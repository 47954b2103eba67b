package corerepo

import (
	"encoding/json"
	"os"

	"github.com/demiurge/demiurge"
	"github.com/go-git/go-git/v5/plumbing"
)

// A switch of the live revision moves two refs (live, previous) and, for
// promote and rollback, rewrites the live checkout. Git has no multi-ref
// transaction without its command-line tool, so the move is journalled:
//
//  1. the journal (old and new live, old and new previous) is written;
//  2. live is compare-and-swapped from old to new (the lock excludes other
//     writers, so read-check-rename is a CAS);
//  3. previous is set;
//  4. the checkout is brought to the new tree, then its head and index;
//  5. the journal is removed.
//
// Recovery (Open, and every mutation before it starts) reads a leftover
// journal: when live still holds the old value the move never happened and
// previous is put back; when live holds the new value the move is rolled
// forward (previous set, checkout synced to the new tree). Either way live
// is old or new, never a mix, and the consistency check is clean after.

// txn is the journal of one switch.
type txn struct {
	Op          string `json:"op"`
	OldLive     string `json:"old_live"`
	NewLive     string `json:"new_live"`
	OldPrevious string `json:"old_previous"` // "" when there was none
	NewPrevious string `json:"new_previous"`
	Checkout    bool   `json:"checkout"` // the checkout must be brought to new_live
}

// crashHook, when set (tests only), is called at named points of a switch;
// a test makes it kill the process to prove recovery.
var crashHook func(point string)

func crashPoint(point string) {
	if crashHook != nil {
		crashHook(point)
	}
}

func readTxn(p Paths) (*txn, error) {
	data, ok, err := readSmallFile(p.journal())
	if err != nil || !ok {
		return nil, err
	}
	var t txn
	if err := json.Unmarshal(data, &t); err != nil || !plumbing.IsHash(t.OldLive) || !plumbing.IsHash(t.NewLive) {
		return nil, demiurge.Errorf(demiurge.EINTERNAL, "core repository: unreadable transaction journal %s", p.journal())
	}
	return &t, nil
}

// switchLive moves live from oldLive to newLive and previous to oldLive as
// one journalled transaction; with checkout it also brings the live
// checkout (which must hold oldLive's files) to newLive's tree. The caller
// holds the lock.
func (r *Repo) switchLive(op string, oldLive, newLive plumbing.Hash, checkout bool, known map[string]diskFile) error {
	oldPrev, hasPrev, err := readRef(r.paths.GitDir, refPrevious)
	if err != nil {
		return err
	}
	t := txn{Op: op, OldLive: oldLive.String(), NewLive: newLive.String(), NewPrevious: oldLive.String(), Checkout: checkout}
	if hasPrev {
		t.OldPrevious = oldPrev.String()
	}
	data, _ := json.Marshal(t)
	if err := writeFileAtomic(r.paths.journal(), data); err != nil {
		return err
	}
	crashPoint("after-journal")
	cur, ok, err := readRef(r.paths.GitDir, refLive)
	if err != nil {
		return err
	}
	if !ok || cur != oldLive {
		_ = os.Remove(r.paths.journal())
		return demiurge.Errorf(demiurge.ECONFLICT, "core repository: live moved underneath (expected %s)", short(oldLive))
	}
	if err := writeRef(r.paths.GitDir, refLive, newLive); err != nil {
		return err
	}
	crashPoint("after-live")
	return r.finishTxn(&t, known)
}

// finishTxn completes a transaction whose live ref already holds NewLive.
func (r *Repo) finishTxn(t *txn, known map[string]diskFile) error {
	newLive := plumbing.NewHash(t.NewLive)
	if err := writeRef(r.paths.GitDir, refPrevious, plumbing.NewHash(t.NewPrevious)); err != nil {
		return err
	}
	crashPoint("after-previous")
	if t.Checkout {
		if err := r.syncCheckout(r.paths.Agents, newLive, r.paths.liveIndex()); err != nil {
			return err
		}
	} else if err := r.recordCheckout(newLive, known); err != nil {
		return err
	}
	if err := writeCheckoutHead(r.paths, newLive); err != nil {
		return err
	}
	crashPoint("after-checkout")
	if err := os.Remove(r.paths.journal()); err != nil && !isNotExist(err) {
		return ioError("remove journal", r.paths.journal(), err)
	}
	return nil
}

// recover resolves a leftover journal; the caller holds the lock.
func (r *Repo) recover() error {
	t, err := readTxn(r.paths)
	if err != nil || t == nil {
		return err
	}
	live, ok, err := readRef(r.paths.GitDir, refLive)
	if err != nil {
		return err
	}
	switch {
	case ok && live.String() == t.NewLive:
		return r.finishTxn(t, nil)
	case ok && live.String() == t.OldLive:
		if t.OldPrevious == "" {
			err = deleteRef(r.paths.GitDir, refPrevious)
		} else {
			err = writeRef(r.paths.GitDir, refPrevious, plumbing.NewHash(t.OldPrevious))
		}
		if err != nil {
			return err
		}
		if err := os.Remove(r.paths.journal()); err != nil && !isNotExist(err) {
			return ioError("remove journal", r.paths.journal(), err)
		}
		return nil
	default:
		return demiurge.Errorf(demiurge.ECONFLICT, "core repository: interrupted %s cannot be resolved: live is neither %s nor %s", t.Op, t.OldLive[:12], t.NewLive[:12])
	}
}
