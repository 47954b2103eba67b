package corerepo

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/go-git/go-git/v5/plumbing"
)

// Options configure a Repo.
type Options struct {
	// Now is the clock for commit times and index stamps; default time.Now.
	Now func() time.Time
	// OnSwitch, when set, is called after Promote or Rollback moved live,
	// with the ids of the cores whose files changed (the cached approvals
	// of those cores must be dropped). It runs on the caller's goroutine
	// after the lock is released.
	OnSwitch func(cores []string)
	// HostKey, when set, is the secret key of confirmation tokens;
	// otherwise the key is read from Paths.HostKey (created on first use)
	// whenever a token is issued or checked.
	HostKey *HostKey
}

// Repo is the core repository of one runtime home. Its methods are safe
// for concurrent use; mutations exclude each other (in this process and
// across processes) through the lock file, and a busy lock is ECONFLICT.
type Repo struct {
	paths    Paths
	store    *store
	now      func() time.Time
	onSwitch func([]string)
	hostKey  *HostKey
}

// Open opens the existing repository of paths and resolves a transaction
// an earlier process left interrupted (when no other process holds the
// lock). A missing repository is ENOTFOUND.
func Open(paths Paths, opts Options) (*Repo, error) {
	if !repositoryExists(paths.GitDir) {
		return nil, demiurge.Errorf(demiurge.ENOTFOUND, "core repository not found: %s", paths.GitDir)
	}
	r := newRepo(paths, opts)
	if _, err := os.Stat(paths.journal()); err == nil {
		if l, err := tryLockFile(paths.Lock); err == nil {
			err := r.recover()
			l.unlock()
			if err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

func newRepo(paths Paths, opts Options) *Repo {
	r := &Repo{paths: paths, store: newStore(paths.GitDir), now: opts.Now, onSwitch: opts.OnSwitch, hostKey: opts.HostKey}
	if r.now == nil {
		r.now = time.Now
	}
	return r
}

// Paths returns the layout the repository was opened with.
func (r *Repo) Paths() Paths { return r.paths }

// InitResult says what Init did.
type InitResult struct {
	Created  bool   `json:"created"`
	Revision string `json:"revision"`
	// Baseline lists the template scopes ("global" and core ids) of the
	// baseline commit Init made; empty when it made none or an empty one.
	Baseline []string `json:"baseline,omitempty"`
}

// Init makes sure the repository of paths exists. When it does (its live
// ref is set) Init only opens it. Otherwise it commits the baseline as the
// first live revision, with message "core init\n\nReason: <reason>\n…":
// the embedded templates of the template scopes whose manifest the agents
// tree holds (a new home: exactly what init installed), nothing else (see
// the package doc, Baseline). The agents tree is neither read as content
// nor changed: whatever it holds beyond the baseline, or differently, is
// left as local edits, which EnsureSaved gates before a turn (a loosening
// needs the operator's token). Init of a half-made repository (a crash
// before the live ref was written) starts over.
func Init(ctx context.Context, paths Paths, opts Options, reason string) (*Repo, InitResult, error) {
	if repositoryExists(paths.GitDir) {
		if _, ok, err := readRef(paths.GitDir, refLive); err == nil && ok {
			r, err := Open(paths, opts)
			if err != nil {
				return nil, InitResult{}, err
			}
			live, err := r.Live()
			return r, InitResult{Revision: live}, err
		}
	}
	if err := os.MkdirAll(paths.Agents, 0o700); err != nil {
		return nil, InitResult{}, ioError("create", paths.Agents, err)
	}
	// Hosts starting side by side on a new home wait for the first one's
	// init instead of failing; the live ref is read again under the lock.
	l, err := lockFileWait(ctx, paths.Lock, 10*time.Second)
	if err != nil {
		return nil, InitResult{}, err
	}
	defer l.unlock()
	if err := initBare(paths.GitDir); err != nil {
		return nil, InitResult{}, err
	}
	r := newRepo(paths, opts)
	if _, ok, err := readRef(paths.GitDir, refLive); err != nil {
		return nil, InitResult{}, err
	} else if ok {
		live, err := r.Live() // made by another process meanwhile
		return r, InitResult{Revision: live}, err
	}
	files, content, scopes, err := initialBaseline(paths.Agents)
	if err != nil {
		return nil, InitResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, InitResult{}, demiurge.WrapError(demiurge.ECANCELED, err, "core init cancelled")
	}
	tree, err := r.storeTree(files, content)
	if err != nil {
		return nil, InitResult{}, err
	}
	c, err := r.store.writeCommit(tree, nil, initMessage(reason, scopes), r.now())
	if err != nil {
		return nil, InitResult{}, err
	}
	crashPoint("init-after-commit")
	// Checkout head and index first, the live ref last: a crash before the
	// ref leaves a repository Init starts over. The index names the
	// baseline's files without stat facts, so the first scan hashes the
	// tree and sees every difference.
	if err := writeCheckoutHead(paths, c); err != nil {
		return nil, InitResult{}, err
	}
	if err := r.recordCheckout(c, nil); err != nil {
		return nil, InitResult{}, err
	}
	crashPoint("init-before-live")
	if err := writeRef(paths.GitDir, refLive, c); err != nil {
		return nil, InitResult{}, err
	}
	return r, InitResult{Created: true, Revision: c.String(), Baseline: scopes}, nil
}

// Live returns the live revision (a full commit id). ECONFLICT when the
// live ref is missing.
func (r *Repo) Live() (string, error) {
	h, err := r.liveHash()
	if err != nil {
		return "", err
	}
	return h.String(), nil
}

func (r *Repo) liveHash() (plumbing.Hash, error) {
	h, ok, err := readRef(r.paths.GitDir, refLive)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if !ok {
		return plumbing.ZeroHash, consistencyError([]Finding{{Code: CodeLiveRefMissing, Message: "live core ref " + refLive + " is missing"}})
	}
	return h, nil
}

// Previous returns the previous live revision, "" when none is recorded.
func (r *Repo) Previous() (string, error) {
	h, ok, err := readRef(r.paths.GitDir, refPrevious)
	if err != nil || !ok {
		return "", err
	}
	return h.String(), nil
}

// Version is one revision of the live history.
type Version struct {
	Revision string `json:"revision"`
	Parent   string `json:"parent,omitempty"`
	Summary  string `json:"summary"`
	Message  string `json:"message"`
	Time     string `json:"time"`
	Live     bool   `json:"live"`
	Previous bool   `json:"previous"`
}

// Versions returns up to limit revisions of the live history, newest
// first, following first parents (limit <= 0 means 20).
func (r *Repo) Versions(limit int) ([]Version, error) {
	if limit <= 0 {
		limit = 20
	}
	live, err := r.liveHash()
	if err != nil {
		return nil, err
	}
	prev, _, _ := readRef(r.paths.GitDir, refPrevious)
	var out []Version
	for h := live; !h.IsZero() && len(out) < limit; {
		c, err := r.store.commit(h)
		if err != nil {
			return nil, err
		}
		v := Version{
			Revision: h.String(),
			Summary:  firstLine(c.Message),
			Message:  strings.TrimRight(c.Message, "\n"),
			Time:     demiurge.FormatTime(c.When),
			Live:     h == live,
			Previous: h == prev,
		}
		h = plumbing.ZeroHash
		if len(c.Parents) > 0 {
			v.Parent = c.Parents[0].String()
			h = c.Parents[0]
		}
		out = append(out, v)
	}
	return out, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

// oneLine returns s on one line, or def when s is blank.
func oneLine(s, def string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return def
	}
	return s
}

// begin takes the lock, resolves a leftover transaction and refuses an
// inconsistent repository. The caller must unlock.
func (r *Repo) begin() (*fileLock, error) {
	l, err := lockFile(r.paths.Lock)
	if err != nil {
		return nil, err
	}
	if err := r.prepareLocked(); err != nil {
		l.unlock()
		return nil, err
	}
	return l, nil
}

func (r *Repo) prepareLocked() error {
	if err := r.recover(); err != nil {
		return err
	}
	if findings := r.Check(); len(findings) > 0 {
		return consistencyError(findings)
	}
	return nil
}
