package gitrepo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/coretree"
)

// Consistency finding codes. The last two go beyond the spec's list: a
// live ref naming a commit the store lacks, and a transaction journal left
// by an interrupted switch.
const (
	CodeRepositoryMissing      = "core.repository.missing"
	CodeLiveRefMissing         = "core.live_ref.missing"
	CodeLiveRefInvalid         = "core.live_ref.invalid"
	CodeCheckoutMissing        = "core.checkout_missing"
	CodeCheckoutHeadMissing    = "core.checkout_head_missing"
	CodeCheckoutHeadMismatch   = "core.checkout_head_mismatch"
	CodePreviousRefInvalid     = "core.previous_ref.invalid"
	CodePreviousRefMatchesLive = "core.previous_ref_matches_live"
	CodeTransactionPending     = "core.transaction.pending"
)

// Finding is one problem of the consistency check.
type Finding struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Check runs the consistency check and returns its findings, none when
// the repository is consistent. It only reads. Begin runs the same check
// and refuses to go on while it finds anything; an interrupted
// transaction is repaired by Open and by the next Begin.
func (r *Repo) Check() []Finding {
	var out []Finding
	add := func(code, format string, args ...any) {
		out = append(out, Finding{Code: code, Message: fmt.Sprintf(format, args...)})
	}
	p := r.paths
	if !Exists(p.GitDir) {
		add(CodeRepositoryMissing, "core repository not found: %s", p.GitDir)
		return out
	}
	if r.JournalPending() {
		add(CodeTransactionPending, "a core revision switch was interrupted or is in progress: %s", p.journal())
	}
	live, ok, err := readRef(p.GitDir, RefLive)
	switch {
	case err != nil:
		add(CodeLiveRefInvalid, "%s", demiurge.ErrorMessage(err))
	case !ok:
		add(CodeLiveRefMissing, "live core ref %s is missing", RefLive)
	case !r.objects.has(live):
		add(CodeLiveRefInvalid, "live core ref names a missing commit: %s", live)
	}
	if info, err := os.Stat(p.Checkout); err != nil || !info.IsDir() {
		add(CodeCheckoutMissing, "live checkout missing: %s", p.Checkout)
	} else {
		head, hok, herr := r.CheckoutHead()
		switch {
		case herr != nil || !hok:
			add(CodeCheckoutHeadMissing, "live checkout has no recorded revision: %s", p.checkoutHead())
		case ok && head != live:
			add(CodeCheckoutHeadMismatch, "live checkout holds %s but live is %s", Short(head), Short(live))
		}
	}
	prev, pok, perr := readRef(p.GitDir, RefPrevious)
	switch {
	case perr != nil:
		add(CodePreviousRefInvalid, "%s", demiurge.ErrorMessage(perr))
	case pok && !r.objects.has(prev):
		add(CodePreviousRefInvalid, "previous core ref names a missing commit: %s", prev)
	case pok && ok && prev == live:
		add(CodePreviousRefMatchesLive, "previous core ref equals live (%s)", Short(live))
	}
	return out
}

// consistencyError is the refusal of a mutation on an inconsistent
// repository.
func consistencyError(findings []Finding) error {
	parts := make([]string, len(findings))
	for i, f := range findings {
		parts[i] = f.Code + ": " + f.Message
	}
	return demiurge.Errorf(demiurge.ECONFLICT, "core repository consistency check failed: %s", strings.Join(parts, "; "))
}

// Exists reports whether gitDir holds a git repository.
func Exists(gitDir string) bool {
	for _, name := range []string{"HEAD", "objects"} {
		if _, err := os.Stat(filepath.Join(gitDir, name)); err != nil {
			return false
		}
	}
	return true
}

// CheckoutHead returns the commit the live checkout was last brought to;
// ok is false when none is recorded.
func (r *Repo) CheckoutHead() (h coretree.Hash, ok bool, err error) {
	path := r.paths.checkoutHead()
	data, ok, err := readSmallFile(path)
	if err != nil || !ok {
		return coretree.Hash{}, ok, err
	}
	h, ok = coretree.ParseHash(strings.TrimSpace(string(data)))
	if !ok {
		return coretree.Hash{}, false, demiurge.Errorf(demiurge.EINTERNAL, "core repository: %s does not hold a commit id", path)
	}
	return h, true, nil
}

func (r *Repo) writeCheckoutHead(h coretree.Hash) error {
	return WriteFile(r.paths.checkoutHead(), []byte(h.String()+"\n"))
}

// Short is the 12-digit abbreviation of a commit id messages use.
func Short(h coretree.Hash) string { return h.String()[:12] }

// Repair fixes what the consistency check can find and a safe fix exists
// for, under the lock, and returns the findings that remain:
//   - an interrupted transaction is resolved (as Open does);
//   - a previous ref that is invalid or equals live is removed;
//   - a checkout with a missing or mismatched head is brought to the live
//     revision: local edits in it are DISCARDED (the operator asked for
//     the repair knowing the tree disagrees with live).
//
// A missing repository or live ref is not repaired: no revision can be
// chosen safely. ECONFLICT when locked.
func (r *Repo) Repair() ([]Finding, error) {
	l, err := r.Lock()
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	if err := r.recover(); err != nil {
		return nil, err
	}
	for _, f := range r.Check() {
		switch f.Code {
		case CodePreviousRefInvalid, CodePreviousRefMatchesLive:
			if err := r.DeleteRef(RefPrevious); err != nil {
				return nil, err
			}
		case CodeCheckoutMissing, CodeCheckoutHeadMissing, CodeCheckoutHeadMismatch:
			live, ok, err := readRef(r.paths.GitDir, RefLive)
			if err != nil || !ok || !r.objects.has(live) {
				continue
			}
			if err := os.MkdirAll(r.paths.Checkout, 0o700); err != nil {
				return nil, IOError("create", r.paths.Checkout, err)
			}
			if err := r.Sync(r.LiveCheckout(), live); err != nil {
				return nil, err
			}
			if err := r.writeCheckoutHead(live); err != nil {
				return nil, err
			}
		}
	}
	return r.Check(), nil
}
