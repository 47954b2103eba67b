package host

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
	"github.com/demiurge/demiurge/coregate"
	"github.com/demiurge/demiurge/corerepo"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/turn"
)

// evolverCore is the core that edits proposals.
const evolverCore = "evolver"

// openRepo opens the core repository for this Host, with the shared
// ledger when the runtime database is PostgreSQL (core_ledger.go): a
// promotion or rollback it makes, or one of another Host it follows,
// drops the cached approvals of the cores it changed.
func (h *Host) openRepo(ctx context.Context) error {
	repo, err := openRepoWith(ctx, h.home.Dir, h.repoOptions(coreLedger(h.store), h.lease.ID()))
	h.repo = repo
	return err
}

// repoOptions are the options of this Host's core repository; hostID
// names the Host in what it publishes to ledger (unused without one).
func (h *Host) repoOptions(ledger corerepo.Ledger, hostID string) corerepo.Options {
	return corerepo.Options{
		Ledger:        ledger,
		HostID:        hostID,
		WatchCheckout: !h.oneShot,
		OnSwitch: func(cores []string) {
			if h.approvals == nil {
				return
			}
			for _, c := range cores {
				h.approvals.InvalidateCore(c)
			}
		},
	}
}

// OpenRepo opens (or creates, from the installed templates) the core
// repository of an initialised home and makes sure the two template cores
// are in it. onSwitch, when set, receives the cores a promotion or
// rollback changed. It has no Ledger: OpenHomeRepo is the home's
// repository as its runtime database shares it.
func OpenRepo(ctx context.Context, home string, onSwitch func(cores []string)) (*corerepo.Repo, error) {
	return openRepoWith(ctx, home, corerepo.Options{OnSwitch: onSwitch})
}

func openRepoWith(ctx context.Context, home string, opts corerepo.Options) (*corerepo.Repo, error) {
	repo, _, err := corerepo.Init(ctx, corerepo.HomePaths(home), opts, "runtime home initialised")
	if err != nil {
		return nil, err
	}
	for _, id := range []string{"assistant", evolverCore} {
		if _, err := repo.EnsureTemplateCore(ctx, id); err != nil {
			return nil, err
		}
	}
	return repo, nil
}

// EvolveStartOptions qualify EvolveStart.
type EvolveStartOptions struct {
	SourceTurnID string
}

// EvolveStart runs an evolve start: an isolated
// run tree of the live revision, the evolver core run there in a fresh
// session (its own provider and model; writes confined to the run tree, no
// dependency files, file tools approved, everything else denied), then the
// run's result and report. Live is never touched.
func (h *Host) EvolveStart(ctx context.Context, coreID, goal string, opts EvolveStartOptions) (*corerepo.StartResult, error) {
	if strings.TrimSpace(goal) == "" {
		return nil, demiurge.Errorf(demiurge.EINVALID, "goal is required for evolve_core start")
	}
	if _, err := h.cores.Load(ctx, coreID); err != nil {
		return nil, err
	}
	run, err := h.repo.StartRun(ctx, coreID, goal, corerepo.StartOptions{SourceTurnID: opts.SourceTurnID})
	if err != nil {
		return nil, err
	}
	res, err := h.turns.Run(ctx, turn.Request{
		CoreID: evolverCore, Text: evolverPrompt(run), NewSession: true,
		Workspace: run.AgentsDir, Approver: evolverApprover{}, ProtectedNames: coregate.DependencyFiles(),
	})
	if err != nil {
		run.Close()
		return nil, err
	}
	out := corerepo.EvolverOutcome{SessionID: res.SessionID, TurnID: res.TurnID, NeedsUser: res.Outcome == turn.OutcomeNeedsUser}
	var texts []string
	for _, d := range res.Deliveries {
		if strings.TrimSpace(d.Text) != "" {
			texts = append(texts, d.Text)
		}
	}
	out.Summary = strings.Join(texts, "\n\n")
	if out.Summary == "" {
		out.Summary = res.Text
	}
	if res.Outcome != turn.OutcomeCompleted && res.Outcome != turn.OutcomeNeedsUser {
		run.Close()
		msg := "evolver turn " + string(res.Outcome)
		if res.Error != nil {
			msg += ": " + res.Error.Message
		}
		return nil, demiurge.Errorf(demiurge.EINTERNAL, "%s", msg)
	}
	return run.Finish(ctx, out)
}

// evolverPrompt is the evolver's instruction for one run.
func evolverPrompt(run *corerepo.Run) string {
	return fmt.Sprintf(`Evolve run %s.
Target core: %s
Goal: %s

The workspace is an isolated copy of the runtime agents tree (the live revision %s). Edit only files under %s/ (paths relative to the workspace).
Nothing you write is live: the Host reviews the proposal with its gates and the operator decides whether to promote it.
Do not add dependency manifests or lock files, generated artifacts, symlinks or files outside the tree. Do not loosen approval policy or grant new capabilities: such proposals need the operator's explicit confirmation.
When done, reply with a short summary of what you changed and why.`, run.ID, run.CoreID, run.Goal, shortRev(run.BaseRevision), run.CoreID)
}

func shortRev(r string) string {
	if len(r) > 12 {
		return r[:12]
	}
	return r
}

// evolverApprover answers the evolver's approval prompts: file tools in
// the run tree are approved once each, everything else (terminal, network)
// is denied, so the evolver cannot act outside its tree.
type evolverApprover struct{}

var evolverFileTools = map[string]bool{"read_file": true, "write_file": true, "patch": true, "search_files": true, "skill_view": true, "skills_list": true}

func (evolverApprover) Approve(_ context.Context, req effect.ApprovalRequest) (string, error) {
	if evolverFileTools[req.Tool] {
		return effect.DecisionAllowOnce, nil
	}
	return effect.DecisionDeny, nil
}

// runEvolver is the evolver.run task body: an evolve start in the
// background. Its outcome metadata is the start result; result_ref the
// report path.
func (h *Host) runEvolver(ctx context.Context, task demiurge.Task, hd *controlplane.Handle) (demiurge.TaskResult, error) {
	p := hd.Payload()
	coreID, _ := p["target_core_id"].(string)
	goal, _ := p["goal"].(string)
	res, err := h.EvolveStart(ctx, coreID, goal, EvolveStartOptions{SourceTurnID: task.OwnerTurnID})
	if err != nil {
		return demiurge.TaskResult{}, err
	}
	var meta map[string]any
	b, _ := json.Marshal(res)
	_ = json.Unmarshal(b, &meta)
	return demiurge.TaskResult{Summary: res.Summary, ResultRef: res.ReportPath, Metadata: meta, Blocked: res.Evolver.NeedsUser}, nil
}
