package corerepo

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/coregate"
	"github.com/demiurge/demiurge/coretree"
	"github.com/demiurge/demiurge/gitrepo"
)

// Options configure a Repo.
type Options struct {
	// Now is the clock for commit times, index stamps and token expiries;
	// default time.Now.
	Now func() time.Time
	// OnSwitch, when set, is called after Promote or Rollback moved live,
	// with the ids of the cores whose files changed (the cached approvals
	// of those cores must be dropped). It runs on the caller's goroutine
	// after the lock is released.
	OnSwitch func(cores []string)
	// HostKey, when set, is the secret key of confirmation tokens;
	// otherwise the key is read from Paths.HostKey (created on first use)
	// whenever a token is issued or checked.
	HostKey *coregate.HostKey
	// CrashPoint, when set, is called at the named points of a revision
	// switch and of Init (gitrepo.Options.CrashPoint): the crash tests
	// kill the process there.
	CrashPoint func(point string)
	// Ledger, when set, is the shared record of the live revision that
	// the Hosts of one runtime ledger follow (the package doc, Several
	// Hosts); nil: this repository is the only truth (one home).
	Ledger Ledger
	// HostID names this Host in what it publishes to the Ledger.
	HostID string
	// WatchCheckout keeps an inotify watch over the checkout and the
	// storage, so that EnsureSaved answers from memory while nothing
	// changed instead of scanning the checkout: for a Repo that lives long
	// (a serving Host). Off, every EnsureSaved scans, and nothing is left
	// to release at exit.
	WatchCheckout bool
}

// Repo is the core repository of one runtime home. Its methods are safe
// for concurrent use; mutations exclude each other (in this process and
// across processes) through the lock file, and a busy lock is ECONFLICT.
type Repo struct {
	paths    Paths
	git      *gitrepo.Repo
	tokens   *coregate.Tokens
	now      func() time.Time
	onSwitch func([]string)
	clean    cleanCache
	ledger   Ledger
	hostID   string
}

// Open opens the existing repository of paths and resolves a transaction
// an earlier process left interrupted (when no other process holds the
// lock). A missing repository is ENOTFOUND.
func Open(paths Paths, opts Options) (*Repo, error) {
	r := newRepo(paths, opts)
	g, err := gitrepo.Open(paths.storage(), r.storageOptions(opts))
	if err != nil {
		return nil, err
	}
	r.git = g
	return r, nil
}

func newRepo(paths Paths, opts Options) *Repo {
	r := &Repo{paths: paths, now: opts.Now, onSwitch: opts.OnSwitch, clean: cleanCache{enabled: opts.WatchCheckout},
		ledger: opts.Ledger, hostID: opts.HostID}
	if r.now == nil {
		r.now = time.Now
	}
	r.tokens = coregate.NewTokens(opts.HostKey, paths.HostKey, r.now)
	return r
}

func (r *Repo) storageOptions(opts Options) gitrepo.Options {
	return gitrepo.Options{Now: r.now, CrashPoint: opts.CrashPoint}
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
	r := newRepo(paths, opts)
	r.git = gitrepo.New(paths.storage(), r.storageOptions(opts))
	if gitrepo.Exists(paths.GitDir) {
		if _, ok, err := r.git.Ref(gitrepo.RefLive); err == nil && ok {
			r, err := Open(paths, opts)
			if err != nil {
				return nil, InitResult{}, err
			}
			live, err := r.Live()
			return r, InitResult{Revision: live}, err
		}
	}
	if err := os.MkdirAll(paths.Agents, 0o700); err != nil {
		return nil, InitResult{}, demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: create %s", paths.Agents)
	}
	// Hosts starting side by side on a new home wait for the first one's
	// init instead of failing; the live ref is read again under the lock.
	l, err := r.git.LockWait(ctx, 10*time.Second)
	if err != nil {
		return nil, InitResult{}, err
	}
	defer l.Unlock()
	if err := r.git.Create(); err != nil {
		return nil, InitResult{}, err
	}
	if _, ok, err := r.git.Ref(gitrepo.RefLive); err != nil {
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
	c, err := r.git.Initialize(files, content, initMessage(reason, scopes))
	if err != nil {
		return nil, InitResult{}, err
	}
	return r, InitResult{Created: true, Revision: c.String(), Baseline: scopes}, nil
}

// Live returns the live revision (a full commit id). ECONFLICT when the
// live ref is missing.
func (r *Repo) Live() (string, error) {
	h, err := r.git.Live()
	if err != nil {
		return "", err
	}
	return h.String(), nil
}

// Previous returns the previous live revision, "" when none is recorded.
func (r *Repo) Previous() (string, error) {
	h, ok, err := r.git.Previous()
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
	live, err := r.git.Live()
	if err != nil {
		return nil, err
	}
	prev, _, _ := r.git.Previous()
	var out []Version
	for h := live; !h.IsZero() && len(out) < limit; {
		c, err := r.git.Commit(h)
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
		h = coretree.Hash{}
		if len(c.Parents) > 0 {
			v.Parent = c.Parents[0].String()
			h = c.Parents[0]
		}
		out = append(out, v)
	}
	return out, nil
}

// Check returns the consistency findings of the repository (doctor,
// `demiurge core check`), none when it is consistent. It only reads.
// Mutations refuse to run while it finds anything; an interrupted
// transaction is repaired by Open and by the next mutation.
func (r *Repo) Check() []gitrepo.Finding { return r.git.Check() }

// Repair fixes the findings a safe fix exists for (gitrepo.Repo.Repair:
// a checkout that disagrees with live is brought to it, DISCARDING its
// local edits) and returns those that remain. ECONFLICT when locked.
func (r *Repo) Repair() ([]gitrepo.Finding, error) { return r.git.Repair() }

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
