package gitrepo

import (
	"encoding/json"
	"os"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/coretree"
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
// Recovery (Open, and Prepare before every mutation) reads a leftover
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

// crashPoint calls Options.CrashPoint, when set, at a named point of a
// switch or of Initialize.
func (r *Repo) crashPoint(point string) {
	if r.crash != nil {
		r.crash(point)
	}
}

func readTxn(p Paths) (*txn, error) {
	data, ok, err := readSmallFile(p.journal())
	if err != nil || !ok {
		return nil, err
	}
	var t txn
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, journalError(p, err)
	}
	_, okOld := coretree.ParseHash(t.OldLive)
	_, okNew := coretree.ParseHash(t.NewLive)
	if !okOld || !okNew {
		return nil, journalError(p, nil)
	}
	return &t, nil
}

func journalError(p Paths, err error) error {
	return demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: unreadable transaction journal %s", p.journal())
}

// JournalPending reports whether a switch left its journal: it was
// interrupted, or another process is in the middle of one.
func (r *Repo) JournalPending() bool {
	_, err := os.Stat(r.paths.journal())
	return err == nil
}

// Switch moves live from oldLive to newLive and previous to oldLive as
// one journalled transaction. With checkout it also brings the live
// checkout (which must hold oldLive's files) to newLive's tree; without,
// the checkout already holds newLive's files and only its head and index
// are recorded, from the stat facts of res (the scan the commit was made
// from; nil when none). The caller holds the lock (Begin). op names the
// switch in the journal. ECONFLICT when live is not oldLive.
func (r *Repo) Switch(op string, oldLive, newLive coretree.Hash, checkout bool, res *Scan) error {
	return r.SwitchWithPrevious(op, oldLive, newLive, oldLive, checkout, res)
}

// SwitchWithPrevious is Switch with previous set to newPrevious (a stored
// commit other than newLive) instead of oldLive: for a switch to a
// revision whose predecessor is known elsewhere (another Host's, through
// the shared ledger).
func (r *Repo) SwitchWithPrevious(op string, oldLive, newLive, newPrevious coretree.Hash, checkout bool, res *Scan) error {
	oldPrev, hasPrev, err := readRef(r.paths.GitDir, RefPrevious)
	if err != nil {
		return err
	}
	t := txn{Op: op, OldLive: oldLive.String(), NewLive: newLive.String(), NewPrevious: newPrevious.String(), Checkout: checkout}
	if hasPrev {
		t.OldPrevious = oldPrev.String()
	}
	data, _ := json.Marshal(t)
	if err := WriteFile(r.paths.journal(), data); err != nil {
		return err
	}
	r.crashPoint("after-journal")
	cur, ok, err := readRef(r.paths.GitDir, RefLive)
	if err != nil {
		return err
	}
	if !ok || cur != oldLive {
		_ = os.Remove(r.paths.journal())
		return demiurge.Errorf(demiurge.ECONFLICT, "core repository: live moved underneath (expected %s)", Short(oldLive))
	}
	if err := writeRef(r.paths.GitDir, RefLive, newLive); err != nil {
		return err
	}
	r.crashPoint("after-live")
	return r.finishTxn(&t, res)
}

// finishTxn completes a transaction whose live ref already holds NewLive.
func (r *Repo) finishTxn(t *txn, res *Scan) error {
	newLive, _ := coretree.ParseHash(t.NewLive)
	newPrevious, _ := coretree.ParseHash(t.NewPrevious)
	if err := writeRef(r.paths.GitDir, RefPrevious, newPrevious); err != nil {
		return err
	}
	r.crashPoint("after-previous")
	if t.Checkout {
		if err := r.Sync(r.LiveCheckout(), newLive); err != nil {
			return err
		}
	} else if err := r.recordLive(newLive, res); err != nil {
		return err
	}
	if err := r.writeCheckoutHead(newLive); err != nil {
		return err
	}
	r.crashPoint("after-checkout")
	if err := os.Remove(r.paths.journal()); err != nil && !isNotExist(err) {
		return IOError("remove journal", r.paths.journal(), err)
	}
	return nil
}

// recover resolves a leftover journal; the caller holds the lock.
func (r *Repo) recover() error {
	t, err := readTxn(r.paths)
	if err != nil || t == nil {
		return err
	}
	live, ok, err := readRef(r.paths.GitDir, RefLive)
	if err != nil {
		return err
	}
	switch {
	case ok && live.String() == t.NewLive:
		return r.finishTxn(t, nil)
	case ok && live.String() == t.OldLive:
		if t.OldPrevious == "" {
			err = r.DeleteRef(RefPrevious)
		} else if prev, okPrev := coretree.ParseHash(t.OldPrevious); okPrev {
			err = writeRef(r.paths.GitDir, RefPrevious, prev)
		} else {
			err = journalError(r.paths, nil)
		}
		if err != nil {
			return err
		}
		if err := os.Remove(r.paths.journal()); err != nil && !isNotExist(err) {
			return IOError("remove journal", r.paths.journal(), err)
		}
		return nil
	default:
		return demiurge.Errorf(demiurge.ECONFLICT, "core repository: interrupted %s cannot be resolved: live is neither %s nor %s", t.Op, t.OldLive[:12], t.NewLive[:12])
	}
}
