package corerepo

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/coregate"
	"github.com/demiurge/demiurge/coretree"
	"github.com/demiurge/demiurge/gitrepo"
	"github.com/demiurge/demiurge/internal/filelock"
)

// runIDPattern is compiled on first use: its bounded repetition is a large
// program, and most processes never name an evolve run.
var runIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^evolve_[A-Za-z0-9_-]{1,80}$`) })

// refRuns holds the reviewed proposals: refs/demiurge/runs/<run_id>.
const refRuns = "refs/demiurge/runs/"

func runRef(id string) string { return refRuns + id }

// Files of a run directory.
const (
	runAgentsDir   = "agents"
	runRequestFile = "request.json"
	runResultFile  = "result.json"
	runReportFile  = "report.md"
	runReviewFile  = "review.json"
	runGatesFile   = "gates.json"
	runPropFile    = "proposal.json"
	runPromoteFile = "promote.json"
	runHeadFile    = "head"
	runIndexFile   = "index"
	runLockFile    = "run.lock"
)

// Run is one evolve run: an isolated checkout of the live revision that
// the evolver core edits, with its request and reports beside it. The Run
// returned by StartRun holds the run (and its core's start slot) until
// Finish or Close: review, promotion and discard of a held run are refused.
type Run struct {
	ID            string `json:"run_id"`
	CoreID        string `json:"target_core_id"`
	Goal          string `json:"goal"`
	SourceTurnID  string `json:"source_turn_id,omitempty"`
	BaseRevision  string `json:"base_revision"`
	Dir           string `json:"run_dir"`
	AgentsDir     string `json:"agents_root"`      // the editable tree: the evolver's workspace
	TargetCoreDir string `json:"target_core_path"` // <AgentsDir>/<CoreID>
	RequestPath   string `json:"request_path"`
	ResultPath    string `json:"result_path"`
	ReportPath    string `json:"report_path"`

	repo *Repo
	mu   sync.Mutex // guards held
	held []*filelock.Lock
}

// StartOptions qualify StartRun.
type StartOptions struct {
	SourceTurnID string // the turn that asked for the run, recorded in request.json
}

// runRequest is request.json.
type runRequest struct {
	RunID        string `json:"run_id"`
	TargetCoreID string `json:"target_core_id"`
	Goal         string `json:"goal"`
	SourceTurnID string `json:"source_turn_id"`
	BaseRevision string `json:"base_revision"`
	CreatedAt    string `json:"created_at"`
}

// StartRun begins an evolve run of coreID: local edits are saved first
// (gated, as EnsureSaved), then the live revision is checked out into
// <Evolve>/<run_id>/agents and request.json written. Live is not changed.
// The Host then runs the evolver in Run.AgentsDir and calls Finish.
//
// Errors: EINVALID for a malformed core id or an empty goal; ENOTFOUND
// when the live revision has no such core; ECONFLICT "evolve already
// running for core: <id>" while another start of that core (in any
// process) holds its slot; the EnsureSaved errors.
func (r *Repo) StartRun(ctx context.Context, coreID, goal string, opts StartOptions) (*Run, error) {
	if !core.ValidID(coreID) {
		return nil, demiurge.Errorf(demiurge.EINVALID, "invalid core id %q", coreID)
	}
	goal = strings.TrimSpace(goal)
	if goal == "" {
		return nil, demiurge.Errorf(demiurge.EINVALID, "evolve goal is required")
	}
	if err := os.MkdirAll(r.paths.Evolve, 0o700); err != nil {
		return nil, gitrepo.IOError("create", r.paths.Evolve, err)
	}
	slotPath := filepath.Join(r.paths.Evolve, ".active-"+coreID+".lock")
	slot, err := filelock.TryLock(slotPath)
	if errors.Is(err, filelock.ErrBusy) {
		return nil, demiurge.Errorf(demiurge.ECONFLICT, "evolve already running for core: %s", coreID)
	}
	if err != nil {
		return nil, gitrepo.IOError("lock", slotPath, err)
	}
	run, err := r.startRun(ctx, coreID, goal, opts)
	if err != nil {
		slot.Unlock()
		return nil, err
	}
	run.held = append(run.held, slot)
	return run, nil
}

func (r *Repo) startRun(ctx context.Context, coreID, goal string, opts StartOptions) (*Run, error) {
	baseStr, err := r.EnsureSaved(ctx)
	if err != nil {
		return nil, err
	}
	base, _ := coretree.ParseHash(baseStr)
	files, err := r.git.Files(base)
	if err != nil {
		return nil, err
	}
	if !files.HasCore(coreID) {
		return nil, demiurge.Errorf(demiurge.ENOTFOUND, "core not found: %s", coreID)
	}
	id := demiurge.NewID("evolve")
	dir := r.paths.runDir(id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, gitrepo.IOError("create run directory", dir, err)
	}
	run := r.runAt(id)
	run.CoreID, run.Goal, run.SourceTurnID, run.BaseRevision = coreID, goal, opts.SourceTurnID, baseStr
	run.TargetCoreDir = filepath.Join(run.AgentsDir, coreID)
	ok := false
	defer func() {
		if !ok {
			run.Close()
			os.RemoveAll(dir)
		}
	}()
	rl, err := filelock.TryLock(filepath.Join(dir, runLockFile))
	if err != nil {
		return nil, gitrepo.IOError("lock", filepath.Join(dir, runLockFile), err)
	}
	run.held = append(run.held, rl)
	if err := os.Mkdir(run.AgentsDir, 0o700); err != nil {
		return nil, gitrepo.IOError("create", run.AgentsDir, err)
	}
	if err := r.git.Sync(run.checkout(), base); err != nil {
		return nil, err
	}
	if err := gitrepo.WriteFile(filepath.Join(dir, runHeadFile), []byte(baseStr+"\n")); err != nil {
		return nil, err
	}
	req := runRequest{RunID: id, TargetCoreID: coreID, Goal: goal, SourceTurnID: opts.SourceTurnID, BaseRevision: baseStr, CreatedAt: demiurge.FormatTime(r.now())}
	if err := writeJSON(run.RequestPath, req); err != nil {
		return nil, err
	}
	ok = true
	return run, nil
}

// runAt describes the run directory of id (without checking it exists).
func (r *Repo) runAt(id string) *Run {
	dir := r.paths.runDir(id)
	agents := filepath.Join(dir, runAgentsDir)
	return &Run{
		ID: id, Dir: dir, AgentsDir: agents,
		RequestPath: filepath.Join(dir, runRequestFile),
		ResultPath:  filepath.Join(dir, runResultFile),
		ReportPath:  filepath.Join(dir, runReportFile),
		repo:        r,
	}
}

// openRun loads an existing run's request; ENOTFOUND `evolve run not
// found: <id>` when there is none.
func (r *Repo) openRun(id string) (*Run, error) {
	notFound := demiurge.Errorf(demiurge.ENOTFOUND, "evolve run not found: %s", id)
	if !runIDPattern().MatchString(id) {
		return nil, notFound
	}
	run := r.runAt(id)
	data, ok, err := readSmallFile(run.RequestPath)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notFound
	}
	var req runRequest
	err = json.Unmarshal(data, &req)
	if _, ok := coretree.ParseHash(req.BaseRevision); err != nil || req.RunID != id || !ok {
		return nil, demiurge.Errorf(demiurge.EINTERNAL, "evolve run %s: unreadable %s", id, run.RequestPath)
	}
	run.CoreID, run.Goal, run.SourceTurnID, run.BaseRevision = req.TargetCoreID, req.Goal, req.SourceTurnID, req.BaseRevision
	run.TargetCoreDir = filepath.Join(run.AgentsDir, run.CoreID)
	return run, nil
}

// checkout is the run tree with its index.
func (run *Run) checkout() gitrepo.Checkout {
	return gitrepo.Checkout{Root: run.AgentsDir, Index: filepath.Join(run.Dir, runIndexFile)}
}

// hold takes the run's lock: ECONFLICT while its start still holds it.
func (run *Run) hold() (*filelock.Lock, error) {
	path := filepath.Join(run.Dir, runLockFile)
	l, err := filelock.TryLock(path)
	if errors.Is(err, filelock.ErrBusy) {
		return nil, demiurge.Errorf(demiurge.ECONFLICT, "evolve run is still running: %s", run.ID)
	}
	if err != nil {
		return nil, gitrepo.IOError("lock", path, err)
	}
	return l, nil
}

// Close releases the run's start slot without writing a result (the
// evolver failed or was cancelled). It is idempotent; the run directory
// stays for inspection until DiscardRun.
func (run *Run) Close() {
	run.mu.Lock()
	defer run.mu.Unlock()
	for _, l := range run.held {
		l.Unlock()
	}
	run.held = nil
}

// EvolverOutcome is what the Host reports of the evolver turn.
type EvolverOutcome struct {
	Summary   string `json:"summary"`
	SessionID string `json:"session_id"`
	TurnID    string `json:"turn_id"`
	NeedsUser bool   `json:"needs_user"`
}

// StartResult is result.json.
type StartResult struct {
	RunID            string            `json:"run_id"`
	TargetCoreID     string            `json:"target_core_id"`
	Goal             string            `json:"goal"`
	AgentsRoot       string            `json:"agents_root"`
	Summary          string            `json:"summary"`
	ReportPath       string            `json:"report_path"`
	ChangedFiles     []coretree.Change `json:"changed_files"`
	Evolver          EvolverOutcome    `json:"evolver"`
	ProposalRevision *string           `json:"proposal_revision"`
	Promoted         bool              `json:"promoted"`
	NewRevision      *string           `json:"new_revision"`
	Gates            []coregate.Gate   `json:"gates"`
	CleanedArtifacts []string          `json:"cleaned_artifacts"`
}

// Finish records the evolver's outcome: generated artifacts are cleaned
// from the run tree, the changed files listed, result.json and report.md
// written, and the run's start slot released (also on error).
func (run *Run) Finish(ctx context.Context, out EvolverOutcome) (*StartResult, error) {
	defer run.Close()
	r := run.repo
	head, err := run.head()
	if err != nil {
		return nil, err
	}
	cleaned, res, err := r.cleanArtifacts(run, head)
	if err != nil {
		return nil, err
	}
	changed := scanChanges(res)
	summary := "evolve run " + run.ID + " ready for review"
	if len(changed) == 0 {
		summary = "evolve run " + run.ID + " made no changes"
	}
	result := &StartResult{
		RunID: run.ID, TargetCoreID: run.CoreID, Goal: run.Goal, AgentsRoot: run.AgentsDir,
		Summary: summary, ReportPath: run.ReportPath, ChangedFiles: changed, Evolver: out,
		CleanedArtifacts: cleaned,
	}
	if err := writeJSON(run.ResultPath, result); err != nil {
		return nil, err
	}
	if err := gitrepo.WriteFile(run.ReportPath, []byte(startReport(result))); err != nil {
		return nil, err
	}
	return result, nil
}

// head is the commit the run tree was last brought to (base, or the last
// reviewed proposal).
func (run *Run) head() (coretree.Hash, error) {
	data, ok, err := readSmallFile(filepath.Join(run.Dir, runHeadFile))
	if err != nil {
		return coretree.Hash{}, err
	}
	h, valid := coretree.ParseHash(strings.TrimSpace(string(data)))
	if !ok || !valid {
		return coretree.Hash{}, demiurge.Errorf(demiurge.EINTERNAL, "evolve run %s: unreadable head", run.ID)
	}
	return h, nil
}

// cleanArtifacts removes untracked generated artifacts (Python caches,
// compiled files, runtime state directories) from the run tree and lists
// them, with the scan of the run tree against head after the cleaning
// (the tree is scanned again only when something was removed).
func (r *Repo) cleanArtifacts(run *Run, head coretree.Hash) ([]string, *gitrepo.Scan, error) {
	co := run.checkout()
	res, err := r.git.Scan(co, head)
	if err != nil {
		return nil, nil, err
	}
	cleaned := []string{}
	for _, c := range res.Changes {
		if c.Kind == coretree.Added && coregate.CleanableArtifact(c.Path) {
			cleaned = append(cleaned, c.Path)
		}
	}
	if len(cleaned) == 0 {
		return cleaned, res, nil
	}
	if err := r.git.RemoveFiles(co, cleaned); err != nil {
		return nil, nil, err
	}
	if res, err = r.git.Scan(co, head); err != nil {
		return nil, nil, err
	}
	return cleaned, res, nil
}
