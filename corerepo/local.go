package corerepo

import (
	"context"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/coregate"
	"github.com/demiurge/demiurge/coretree"
	"github.com/demiurge/demiurge/gitrepo"
)

// Status is the state of the live checkout against the live revision.
type Status struct {
	Revision string            `json:"revision"`
	Clean    bool              `json:"clean"`
	Changes  []coretree.Change `json:"changes"`
}

// Status lists the local edits: files of the agents tree that differ from
// the live revision. It only reads (and may refresh the stat index).
func (r *Repo) Status() (*Status, error) {
	live, res, err := r.git.ScanLive()
	if err != nil {
		return nil, err
	}
	return &Status{Revision: live.String(), Clean: res.Clean(), Changes: scanChanges(res)}, nil
}

// scanChanges is the changes of a scan, never nil.
func scanChanges(res *gitrepo.Scan) []coretree.Change {
	if res.Changes == nil {
		return []coretree.Change{}
	}
	return res.Changes
}

// SaveOptions qualify Save.
type SaveOptions struct {
	// Confirm is the operator's token for an edit that loosens approval
	// configuration or grants capabilities (`demiurge core save --confirm`).
	Confirm string
	// Reason is added to the commit message when set.
	Reason string

	// issueToken puts a fresh token in an approval_security refusal: only
	// Save, the operator's command, does; EnsureSaved, whose errors can
	// reach a model (a delegated turn, evolve_core), names the command
	// instead.
	issueToken bool
}

// SaveResult says what Save did.
type SaveResult struct {
	Saved    bool              `json:"saved"`
	Revision string            `json:"revision"` // live after the save
	Previous string            `json:"previous,omitempty"`
	Summary  string            `json:"summary,omitempty"`
	Message  string            `json:"message,omitempty"`
	Changes  []coretree.Change `json:"changes"`
	Gates    []coregate.Gate   `json:"gates,omitempty"`
}

// Save commits the local edits as a new live revision after the gates
// (coregate: path_safety, artifact, dependency, core_load:<core>,
// approval_security, cross_core_references). With no edits it does
// nothing and reports the live revision.
//
// Errors: ECONFLICT "core repository is locked: <path>" when another
// mutation runs, ECONFLICT "core repository consistency check failed: …"
// on a broken repository, ECONFIG "local agent edits failed gates:
// <phase>: <detail>; …" (cause *coregate.GateError) when a gate fails; a
// loosening approval edit without a valid opts.Confirm fails
// approval_security with "…; operator confirmation required: run
// `demiurge core save --confirm <token>`" (GateError.Token is that token,
// valid for coregate.SaveTokenTTL), after why a given token does not
// confirm it (another change, another core, expired). On any error live
// and the files are untouched. An error reading the Host key file
// (coregate.LoadHostKey) fails the save.
func (r *Repo) Save(ctx context.Context, opts SaveOptions) (*SaveResult, error) {
	l, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	opts.issueToken = true
	return r.saveLocked(ctx, opts)
}

// EnsureSaved is what the Host runs before a turn loads a core: with no
// local edits it returns the live revision (the turn's core_revision) at
// the cost of a directory scan, or of nothing when the checkout and the
// repository are known unchanged since the last clean scan (cleanCache);
// otherwise it saves them as Save does and returns the new live revision.
// A failed gate is the Save error and no turn should run; an edit that
// needs the operator's confirmation is refused with "run `demiurge core
// save` to confirm it" and no token, so no token ever reaches a turn. It
// waits up to two seconds for a concurrent mutation instead of failing at
// once.
//
// With a Ledger it first reads the shared live revision (one read of one
// row): when another Host moved it, this repository follows it before
// anything else (imports its revisions, switches live and the checkout),
// and unsaved local edits are refused (the package doc, Several Hosts).
func (r *Repo) EnsureSaved(ctx context.Context) (string, error) {
	r.clean.mu.Lock()
	defer r.clean.mu.Unlock()
	shared, err := r.sharedLive(ctx)
	if err != nil {
		return "", err
	}
	if rev, ok := r.clean.get(); ok && (r.ledger == nil || rev == shared) {
		return rev, nil
	}
	// Armed before the scan: a change made while it runs is seen next time.
	armed := r.clean.arm(r.git)
	rev, err := r.ensureSaved(ctx, shared)
	if err == nil && armed {
		r.clean.rev = rev
	}
	return rev, err
}

func (r *Repo) ensureSaved(ctx context.Context, shared string) (string, error) {
	if !r.git.JournalPending() {
		head, hok, herr := r.git.CheckoutHead()
		live, res, err := r.git.ScanLive()
		if err != nil {
			return "", err
		}
		if herr == nil && hok && head == live && res.Clean() && (r.ledger == nil || shared == live.String()) {
			return live.String(), nil
		}
	}
	l, err := r.beginWait(ctx, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer l.Unlock()
	res, err := r.saveLocked(ctx, SaveOptions{})
	if err != nil {
		return "", err
	}
	return res.Revision, nil
}

// saveLocked saves the local edits. The caller holds the lock on a
// consistent repository.
func (r *Repo) saveLocked(ctx context.Context, opts SaveOptions) (*SaveResult, error) {
	live, res, err := r.git.ScanLive()
	if err != nil {
		return nil, err
	}
	if res.Clean() {
		return &SaveResult{Revision: live.String(), Changes: []coretree.Change{}}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, demiurge.WrapError(demiurge.ECANCELED, err, "save cancelled")
	}
	newTree, problems, content := res.Proposed()
	edit := coregate.NewEdit(coregate.Input{Root: r.paths.Agents, Old: res.Base, New: newTree, Problems: problems, Content: content, Blobs: r.git})
	approval := coregate.LocalApproval{Base: live.String(), Confirm: opts.Confirm, Issue: opts.issueToken}
	gates, token, err := edit.LocalGates(approval, r.tokens)
	if err != nil {
		return nil, err
	}
	if len(coregate.Failed(gates)) > 0 {
		return nil, coregate.Refusal("local agent edits failed gates", gates, token)
	}
	if err := res.Unchanged(); err != nil {
		return nil, err
	}
	tree, err := r.git.StoreTree(newTree, content)
	if err != nil {
		return nil, err
	}
	changed := edit.Changed()
	detected := edit.ManifestChanges()
	summary := commitSummary(changed, detected)
	msg := commitMessage(summary, oneLine(opts.Reason, ""), changed, detected)
	c, err := r.git.WriteCommit(tree, []coretree.Hash{live}, msg)
	if err != nil {
		return nil, err
	}
	if err := r.switchLive(ctx, "save", live, c, false, res); err != nil {
		return nil, err
	}
	return &SaveResult{Saved: true, Revision: c.String(), Previous: live.String(), Summary: summary, Message: msg, Gates: gates, Changes: changed}, nil
}

// Discard restores the live revision's files in the agents tree: edited
// and deleted files come back, added files (and directories they leave
// empty) are removed. It returns what it undid. With a Ledger it then
// follows the shared live revision (what a Host whose edits were refused
// because another Host moved it runs). ECONFLICT when locked or
// inconsistent.
func (r *Repo) Discard(ctx context.Context) ([]coretree.Change, error) {
	l, err := r.git.Begin()
	if err != nil {
		return nil, err
	}
	h := &held{r: r, l: l}
	defer h.Unlock()
	_, res, err := r.git.ScanLive()
	if err != nil {
		return nil, err
	}
	undone := []coretree.Change{}
	if !res.Clean() {
		if err := r.git.Restore(r.git.LiveCheckout(), res); err != nil {
			return nil, err
		}
		undone = res.Changes
	}
	if err := r.followLocked(ctx, h); err != nil {
		return nil, err
	}
	return undone, nil
}

// dirtyError is the refusal of a revision switch over unsaved edits, in
// the spec's words.
func dirtyError(changes []coretree.Change) error {
	quoted := make([]string, len(changes))
	for i, c := range changes {
		quoted[i] = "'" + c.Path + "'"
	}
	return demiurge.Errorf(demiurge.ECONFLICT, "local agent edits must be saved or discarded before switching core revisions: [%s]; run `demiurge core save` or `demiurge core discard --yes`", strings.Join(quoted, ", "))
}

// LocalDiff is the secret-safe diff of the local edits.
type LocalDiff struct {
	Revision string            `json:"revision"`
	Changes  []coretree.Change `json:"changes"`
	Diff     string            `json:"diff"`
}

// Diff renders the local edits against the live revision as a line diff
// with credentials redacted (see Review.Diff). It only reads.
func (r *Repo) Diff() (*LocalDiff, error) {
	live, res, err := r.git.ScanLive()
	if err != nil {
		return nil, err
	}
	newTree, problems, content := res.Proposed()
	edit := coregate.NewEdit(coregate.Input{Old: res.Base, New: newTree, Problems: problems, Content: content, Blobs: r.git})
	return &LocalDiff{Revision: live.String(), Changes: scanChanges(res), Diff: edit.Diff()}, nil
}
