package corerepo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/go-git/go-git/v5/plumbing"
)

// Consistency finding codes (spec host-runtime §7.3). The last two are
// additions: a live ref naming a commit the store lacks, and a transaction
// journal left by an interrupted switch.
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

// Check runs the consistency check of spec host-runtime §7.3 and returns
// its findings, none when the repository is consistent. It only reads.
// Mutations run the same check and refuse to run while it finds anything
// (see consistencyError); doctor reports the findings. An interrupted
// transaction is repaired by Open and by the next mutation.
func (r *Repo) Check() []Finding {
	return checkPaths(r.paths, r.store)
}

func checkPaths(p Paths, s *store) []Finding {
	var out []Finding
	add := func(code, format string, args ...any) {
		out = append(out, Finding{Code: code, Message: fmt.Sprintf(format, args...)})
	}
	if !repositoryExists(p.GitDir) {
		add(CodeRepositoryMissing, "core repository not found: %s", p.GitDir)
		return out
	}
	if _, err := os.Stat(p.journal()); err == nil {
		add(CodeTransactionPending, "a core revision switch was interrupted or is in progress: %s", p.journal())
	}
	live, ok, err := readRef(p.GitDir, refLive)
	switch {
	case err != nil:
		add(CodeLiveRefInvalid, "%s", demiurge.ErrorMessage(err))
	case !ok:
		add(CodeLiveRefMissing, "live core ref %s is missing", refLive)
	case s == nil || !s.has(live):
		add(CodeLiveRefInvalid, "live core ref names a missing commit: %s", live)
	}
	if info, err := os.Stat(p.Agents); err != nil || !info.IsDir() {
		add(CodeCheckoutMissing, "live checkout missing: %s", p.Agents)
	} else {
		head, hok, herr := readCheckoutHead(p)
		switch {
		case herr != nil || !hok:
			add(CodeCheckoutHeadMissing, "live checkout has no recorded revision: %s", p.checkoutHead())
		case ok && head != live:
			add(CodeCheckoutHeadMismatch, "live checkout holds %s but live is %s", short(head), short(live))
		}
	}
	prev, pok, perr := readRef(p.GitDir, refPrevious)
	switch {
	case perr != nil:
		add(CodePreviousRefInvalid, "%s", demiurge.ErrorMessage(perr))
	case pok && (s == nil || !s.has(prev)):
		add(CodePreviousRefInvalid, "previous core ref names a missing commit: %s", prev)
	case pok && ok && prev == live:
		add(CodePreviousRefMatchesLive, "previous core ref equals live (%s)", short(live))
	}
	return out
}

// consistencyError is the refusal of a mutation on an inconsistent
// repository (spec host-runtime §7.3).
func consistencyError(findings []Finding) error {
	parts := make([]string, len(findings))
	for i, f := range findings {
		parts[i] = f.Code + ": " + f.Message
	}
	return demiurge.Errorf(demiurge.ECONFLICT, "core repository consistency check failed: %s", strings.Join(parts, "; "))
}

// repositoryExists reports whether gitDir holds a git repository.
func repositoryExists(gitDir string) bool {
	for _, name := range []string{"HEAD", "objects"} {
		if _, err := os.Stat(filepath.Join(gitDir, name)); err != nil {
			return false
		}
	}
	return true
}

func readCheckoutHead(p Paths) (plumbing.Hash, bool, error) {
	data, ok, err := readSmallFile(p.checkoutHead())
	if err != nil || !ok {
		return plumbing.ZeroHash, ok, err
	}
	s := strings.TrimSpace(string(data))
	if !plumbing.IsHash(s) {
		return plumbing.ZeroHash, false, demiurge.Errorf(demiurge.EINTERNAL, "core repository: %s does not hold a commit id", p.checkoutHead())
	}
	return plumbing.NewHash(s), true, nil
}

func writeCheckoutHead(p Paths, h plumbing.Hash) error {
	return writeFileAtomic(p.checkoutHead(), []byte(h.String()+"\n"))
}

func short(h plumbing.Hash) string { return h.String()[:12] }

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

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
	l, err := lockFile(r.paths.Lock)
	if err != nil {
		return nil, err
	}
	defer l.unlock()
	if err := r.recover(); err != nil {
		return nil, err
	}
	for _, f := range r.Check() {
		switch f.Code {
		case CodePreviousRefInvalid, CodePreviousRefMatchesLive:
			if err := deleteRef(r.paths.GitDir, refPrevious); err != nil {
				return nil, err
			}
		case CodeCheckoutMissing, CodeCheckoutHeadMissing, CodeCheckoutHeadMismatch:
			live, ok, err := readRef(r.paths.GitDir, refLive)
			if err != nil || !ok || !r.store.has(live) {
				continue
			}
			if err := os.MkdirAll(r.paths.Agents, 0o700); err != nil {
				return nil, ioError("create", r.paths.Agents, err)
			}
			if err := r.syncCheckout(r.paths.Agents, live, r.paths.liveIndex()); err != nil {
				return nil, err
			}
			if err := writeCheckoutHead(r.paths, live); err != nil {
				return nil, err
			}
		}
	}
	return r.Check(), nil
}
