package corerepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/go-git/go-git/v5/plumbing"
)

// FileChange is one changed path of the agents tree, relative to it.
type FileChange struct {
	Path   string `json:"path"`
	Change string `json:"change"` // added, modified or deleted
}

// Status is the state of the live checkout against the live revision.
type Status struct {
	Revision string       `json:"revision"`
	Clean    bool         `json:"clean"`
	Changes  []FileChange `json:"changes"`
}

// Status lists the local edits: files of the agents tree that differ from
// the live revision. It only reads (and may refresh the stat index).
func (r *Repo) Status() (*Status, error) {
	live, res, err := r.scanLive()
	if err != nil {
		return nil, err
	}
	return &Status{Revision: live.String(), Clean: len(res.changes) == 0, Changes: fileChanges(res.changes)}, nil
}

func fileChanges(changes []change) []FileChange {
	out := make([]FileChange, len(changes))
	for i, c := range changes {
		out[i] = FileChange{Path: c.Path, Change: c.Kind}
	}
	return out
}

// scanLive scans the live checkout against live, refreshing the index when
// it is stale and the checkout is recorded at live.
func (r *Repo) scanLive() (plumbing.Hash, *scanResult, error) {
	live, err := r.liveHash()
	if err != nil {
		return live, nil, err
	}
	res, err := r.scan(r.paths.Agents, live, r.paths.liveIndex())
	if err != nil {
		return live, nil, err
	}
	if res.refresh {
		if head, ok, _ := readCheckoutHead(r.paths); ok && head == live {
			_ = writeIndex(r.paths.liveIndex(), indexFor(live, res.base, res.files, r.now()))
		}
	}
	return live, res, nil
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
	Saved    bool         `json:"saved"`
	Revision string       `json:"revision"` // live after the save
	Previous string       `json:"previous,omitempty"`
	Summary  string       `json:"summary,omitempty"`
	Message  string       `json:"message,omitempty"`
	Changes  []FileChange `json:"changes"`
	Gates    []Gate       `json:"gates,omitempty"`
}

// Save commits the local edits as a new live revision after the gates
// (path_safety, artifact, dependency, core_load:<core>, approval_security,
// cross_core_references). With no edits it does nothing and reports the
// live revision.
//
// Errors: ECONFLICT "core repository is locked: <path>" when another
// mutation runs, ECONFLICT "core repository consistency check failed: …"
// on a broken repository, ECONFIG "local agent edits failed gates:
// <phase>: <detail>; …" (cause *GateError) when a gate fails; a loosening
// approval edit without a valid opts.Confirm fails approval_security with
// "…; operator confirmation required: run `demiurge core save --confirm
// <token>`" (GateError.Token is that token, valid for SaveTokenTTL), after
// why a given token does not confirm it (another change, another core,
// expired). On any error live and the files are untouched. An error
// reading the Host key file (LoadHostKey) fails the save.
func (r *Repo) Save(ctx context.Context, opts SaveOptions) (*SaveResult, error) {
	l, err := r.begin()
	if err != nil {
		return nil, err
	}
	defer l.unlock()
	opts.issueToken = true
	return r.saveLocked(ctx, opts)
}

// EnsureSaved is what the Host runs before a turn loads a core: with no
// local edits it returns the live revision (the turn's core_revision) at
// the cost of a directory scan; otherwise it saves them as Save does and
// returns the new live revision. A failed gate is the Save error and no
// turn should run; an edit that needs the operator's confirmation is
// refused with "run `demiurge core save` to confirm it" and no token, so no
// token ever reaches a turn. It waits up to two seconds for a concurrent
// mutation instead of failing at once.
func (r *Repo) EnsureSaved(ctx context.Context) (string, error) {
	if _, err := os.Stat(r.paths.journal()); err != nil {
		head, hok, herr := readCheckoutHead(r.paths)
		live, res, err := r.scanLive()
		if err != nil {
			return "", err
		}
		if herr == nil && hok && head == live && len(res.changes) == 0 {
			return live.String(), nil
		}
	}
	l, err := lockFileWait(ctx, r.paths.Lock, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer l.unlock()
	if err := r.prepareLocked(); err != nil {
		return "", err
	}
	res, err := r.saveLocked(ctx, SaveOptions{})
	if err != nil {
		return "", err
	}
	return res.Revision, nil
}

// saveLocked saves the local edits. The caller holds the lock on a
// consistent repository.
func (r *Repo) saveLocked(ctx context.Context, opts SaveOptions) (*SaveResult, error) {
	live, res, err := r.scanLive()
	if err != nil {
		return nil, err
	}
	if len(res.changes) == 0 {
		return &SaveResult{Revision: live.String(), Changes: []FileChange{}}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, demiurge.WrapError(demiurge.ECANCELED, err, "save cancelled")
	}
	newTree, problems, content := newTreeFromScan(res)
	in := &gateInput{root: r.paths.Agents, old: res.base, new: newTree, problems: problems, content: content}
	approval := localApproval{base: live.String(), confirm: opts.Confirm, issue: opts.issueToken}
	gates, token, err := r.runLocalGates(in, approval)
	if err != nil {
		return nil, err
	}
	if len(failedGates(gates)) > 0 {
		return nil, gateError("local agent edits failed gates", gates, token)
	}
	if err := recheck(r.paths.Agents, res.changes); err != nil {
		return nil, err
	}
	tree, err := r.storeTree(newTree, content)
	if err != nil {
		return nil, err
	}
	detected := detectedChanges(in.changed, r.oldReader(in), r.newReader(in))
	summary := commitSummary(in.changed, detected)
	msg := commitMessage(summary, oneLine(opts.Reason, ""), in.changed, detected)
	c, err := r.store.writeCommit(tree, []plumbing.Hash{live}, msg, r.now())
	if err != nil {
		return nil, err
	}
	if err := r.switchLive("save", live, c, false, res.files); err != nil {
		return nil, err
	}
	out := &SaveResult{Saved: true, Revision: c.String(), Previous: live.String(), Summary: summary, Message: msg, Gates: gates}
	for _, pc := range in.changed {
		out.Changes = append(out.Changes, FileChange{Path: pc.Path, Change: pc.Kind})
	}
	return out, nil
}

// localApproval asks runLocalGates for the approval_security gate.
type localApproval struct {
	base    string // the live revision the save is on
	confirm string // the operator's token, "" when none
	issue   bool   // put a fresh token in a refusal
}

// runLocalGates runs the gates of a local save: path_safety, artifact,
// dependency, core_load:<core>…, approval_security (passes only with a
// token that confirms exactly this change), then cross_core_references.
// It returns the token it issued for a refusal, if any.
func (r *Repo) runLocalGates(in *gateInput, approval localApproval) ([]Gate, string, error) {
	in.prepare()
	gates := []Gate{in.gatePathSafety(), in.gateArtifact(), in.gateDependency()}
	gates = append(gates, in.gatesCoreLoad()...)
	g, token, err := r.gateApprovalSecurity(in, approval)
	if err != nil {
		return nil, "", err
	}
	gates = append(gates, g, in.gateCrossCore())
	return gates, token, nil
}

// gateApprovalSecurity passes an edit that loosens nothing, or one a
// valid token confirms; a refusal names every loosening and the command
// that confirms it (with a fresh token when approval.issue).
func (r *Repo) gateApprovalSecurity(in *gateInput, approval localApproval) (Gate, string, error) {
	g := Gate{Phase: PhaseApprovalSecurity, Passed: true}
	sr, err := r.reviewSecurity(in, false)
	if err != nil || len(sr.Approval) == 0 {
		return g, "", err
	}
	data := map[string]any{"manual_review_required": true, "changes": sr.Approval}
	g.Data = data
	c := saveConfirmation(approval.base, in.new, sr)
	why := ""
	if approval.confirm != "" {
		err := r.checkToken(approval.confirm, c)
		var te *tokenError
		switch {
		case err == nil:
			data["confirmed"] = true
			return g, "", nil
		case errors.As(err, &te):
			why = te.msg + "; "
		default:
			return Gate{}, "", err
		}
	}
	g.Passed = false
	parts := make([]string, len(sr.Approval))
	for i, a := range sr.Approval {
		parts[i] = a.String()
	}
	instruction, token := "run `demiurge core save` to confirm it", ""
	if approval.issue {
		if token, err = r.issueToken(c); err != nil {
			return Gate{}, "", err
		}
		instruction = "run `demiurge core save --confirm " + token + "`"
	}
	g.Detail = strings.Join(parts, ", ") + "; " + why + "operator confirmation required: " + instruction
	return g, token, nil
}

// storeTree writes the blobs of the changed files (content, as
// newTreeFromScan returns it) and the tree of files, and returns the tree
// hash.
func (r *Repo) storeTree(files flatTree, content map[string][]byte) (plumbing.Hash, error) {
	for p, data := range content {
		h, err := r.store.writeBlob(data)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if h != files[p].Hash {
			return plumbing.ZeroHash, demiurge.Errorf(demiurge.EINTERNAL, "core repository: hash of %s changed while it was stored", p)
		}
	}
	return r.store.writeTree(files)
}

// recheck refuses a save when a changed file was modified after the scan
// read it: the gates judged the scanned content, which is what would be
// committed.
func recheck(root string, changes []change) error {
	for _, c := range changes {
		if c.Kind == ChangeDeleted {
			continue
		}
		info, err := os.Lstat(filepath.Join(root, filepath.FromSlash(c.Path)))
		if err != nil {
			return demiurge.Errorf(demiurge.ECONFLICT, "agents tree changed during save (%s); retry", c.Path)
		}
		ctime, ino := statExtra(info)
		if info.Size() != c.New.Stat.Size || info.ModTime().UnixNano() != c.New.Stat.MTime || ctime != c.New.Stat.CTime || ino != c.New.Stat.Ino {
			return demiurge.Errorf(demiurge.ECONFLICT, "agents tree changed during save (%s); retry", c.Path)
		}
	}
	return nil
}

// Discard restores the live revision's files in the agents tree: edited
// and deleted files come back, added files (and directories they leave
// empty) are removed. It returns what it undid. ECONFLICT when locked or
// inconsistent.
func (r *Repo) Discard(ctx context.Context) ([]FileChange, error) {
	l, err := r.begin()
	if err != nil {
		return nil, err
	}
	defer l.unlock()
	_, res, err := r.scanLive()
	if err != nil {
		return nil, err
	}
	if len(res.changes) == 0 {
		return []FileChange{}, nil
	}
	if err := r.restoreAndIndex(r.paths.Agents, res, r.paths.liveIndex()); err != nil {
		return nil, err
	}
	return fileChanges(res.changes), nil
}

// dirtyError is the refusal of a revision switch over unsaved edits (spec
// host-runtime §7.3).
func dirtyError(changes []change) error {
	quoted := make([]string, len(changes))
	for i, c := range changes {
		quoted[i] = "'" + c.Path + "'"
	}
	return demiurge.Errorf(demiurge.ECONFLICT, "local agent edits must be saved or discarded before switching core revisions: [%s]; run `demiurge core save` or `demiurge core discard --yes`", strings.Join(quoted, ", "))
}

// LocalDiff is the secret-safe diff of the local edits.
type LocalDiff struct {
	Revision string       `json:"revision"`
	Changes  []FileChange `json:"changes"`
	Diff     string       `json:"diff"`
}

// Diff renders the local edits against the live revision as a line diff
// with credentials redacted (see Review.Diff). It only reads.
func (r *Repo) Diff() (*LocalDiff, error) {
	live, res, err := r.scanLive()
	if err != nil {
		return nil, err
	}
	newTree, problems, content := newTreeFromScan(res)
	in := &gateInput{old: res.base, new: newTree, problems: problems, content: content}
	in.prepare()
	return &LocalDiff{
		Revision: live.String(),
		Changes:  fileChanges(res.changes),
		Diff:     secretSafeDiff(in.changed, r.oldReader(in), r.newReader(in)),
	}, nil
}
