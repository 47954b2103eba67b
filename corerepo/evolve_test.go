package corerepo

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/coregate"
)

// startEdited starts a run of assistant, applies edit to its tree and
// finishes it.
func startEdited(t *testing.T, r *Repo, edit func(agents string)) *Run {
	t.Helper()
	run, err := r.StartRun(context.Background(), "assistant", "improve", StartOptions{SourceTurnID: "turn_x"})
	if err != nil {
		t.Fatalf("StartRun: %v", err)
	}
	edit(run.AgentsDir)
	if _, err := run.Finish(context.Background(), EvolverOutcome{Summary: "done"}); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	return run
}

func TestEvolvePromoteHappyPath(t *testing.T) {
	ctx := context.Background()
	p, r := newHome(t)
	var switched []string
	r.onSwitch = func(c []string) { switched = c }
	base := mustLive(t, r)
	run, err := r.StartRun(ctx, "assistant", "make it brief", StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.StartRun(ctx, "assistant", "again", StartOptions{}); err == nil {
		t.Fatal("second start of the same core succeeded")
	} else {
		wantCode(t, err, demiurge.ECONFLICT, "evolve already running for core: assistant")
	}
	_, err = r.Review(ctx, run.ID, ReviewOptions{})
	wantCode(t, err, demiurge.ECONFLICT, "evolve run is still running: "+run.ID)
	if run.BaseRevision != base || readFile(t, run.AgentsDir, "assistant/agent.yaml") != readFile(t, p.Agents, "assistant/agent.yaml") {
		t.Fatal("run tree is not a checkout of live")
	}
	editFile(t, run.AgentsDir, "assistant/agent/SOUL.md", "", "Be brief.\n")
	writeFile(t, run.AgentsDir, "assistant/agent/__pycache__/x.pyc", "junk")
	res, err := run.Finish(ctx, EvolverOutcome{Summary: "edited SOUL", SessionID: "s", TurnID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ChangedFiles) != 1 || res.CleanedArtifacts[0] != "assistant/agent/__pycache__/x.pyc" || !strings.Contains(res.Summary, "ready for review") {
		t.Fatalf("Finish = %+v", res)
	}
	if !strings.HasPrefix(readFile(t, run.Dir, "report.md"), "# Evolve Start Report") {
		t.Fatal("no start report")
	}
	if mustLive(t, r) != base {
		t.Fatal("start moved live")
	}

	rv, err := r.Review(ctx, run.ID, ReviewOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rv.Passed || rv.ProposalRevision == nil || rv.ManualReviewRequired || rv.Stale {
		t.Fatalf("Review = %+v", rv)
	}
	var phases []string
	for _, g := range rv.Gates {
		phases = append(phases, g.Phase)
	}
	if got, want := strings.Join(phases, ","), "path_safety,artifact,dependency,core_load:assistant,mcp_security,approval_security,cross_core_references"; got != want {
		t.Fatalf("gates = %s, want %s", got, want)
	}
	if !strings.Contains(rv.Diff, "+Be brief.") {
		t.Fatalf("diff = %q", rv.Diff)
	}
	var onDisk Review
	if err := json.Unmarshal([]byte(readFile(t, run.Dir, "review.json")), &onDisk); err != nil || onDisk.RunID != run.ID {
		t.Fatalf("review.json: %v %+v", err, onDisk)
	}
	if ref, ok, _ := r.git.Ref(runRef(run.ID)); !ok || ref.String() != *rv.ProposalRevision {
		t.Fatal("run ref not recorded")
	}

	pr, err := r.Promote(ctx, run.ID, PromoteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !pr.Promoted || *pr.NewRevision != *rv.ProposalRevision || pr.Summary != "evolve promoted "+run.ID+"@"+(*rv.ProposalRevision)[:12] {
		t.Fatalf("Promote = %+v", pr)
	}
	if mustLive(t, r) != *pr.NewRevision {
		t.Fatal("live not moved")
	}
	if prev, _ := r.Previous(); prev != base {
		t.Fatal("previous not set to old live")
	}
	if !strings.Contains(readFile(t, p.Agents, "assistant/agent/SOUL.md"), "Be brief.") {
		t.Fatal("live checkout not updated")
	}
	if len(switched) != 1 || switched[0] != "assistant" || len(pr.AffectedCores) != 1 {
		t.Fatalf("affected = %v, switched = %v", pr.AffectedCores, switched)
	}
	mustClean(t, r)
	if st, _ := r.Status(); !st.Clean {
		t.Fatalf("status after promote = %+v", st)
	}

	if err := r.DiscardRun(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(run.Dir); !os.IsNotExist(err) {
		t.Fatal("run dir not removed")
	}
	_, err = r.Review(ctx, run.ID, ReviewOptions{})
	wantCode(t, err, demiurge.ENOTFOUND, "evolve run not found: "+run.ID)
}

func TestPromoteStale(t *testing.T) {
	ctx := context.Background()
	p, r := newHome(t)
	run := startEdited(t, r, func(a string) { editFile(t, a, "assistant/agent/SOUL.md", "", "A\n") })
	editFile(t, p.Agents, "evolver/agent/SOUL.md", "", "local\n")
	if _, err := r.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	live := mustLive(t, r)
	rv, err := r.Review(ctx, run.ID, ReviewOptions{})
	if err != nil || !rv.Stale {
		t.Fatalf("Review = %+v, %v", rv, err)
	}
	_, err = r.Promote(ctx, run.ID, PromoteOptions{})
	wantCode(t, err, demiurge.ECONFLICT, "stale core proposal: run_id="+run.ID+" base="+run.BaseRevision+" current="+live+"; review or rebase the evolve run before promoting")
	if mustLive(t, r) != live {
		t.Fatal("live moved")
	}
}

func TestPromoteRefusesDirtyTree(t *testing.T) {
	ctx := context.Background()
	p, r := newHome(t)
	run := startEdited(t, r, func(a string) { editFile(t, a, "assistant/agent/SOUL.md", "", "A\n") })
	editFile(t, p.Agents, "evolver/agent/SOUL.md", "", "local\n")
	_, err := r.Promote(ctx, run.ID, PromoteOptions{})
	wantCode(t, err, demiurge.ECONFLICT, "local agent edits must be saved or discarded before switching core revisions: ['evolver/agent/SOUL.md']; run `demiurge core save` or `demiurge core discard --yes`")
	_, err = r.Rollback(ctx, "", "")
	wantCode(t, err, demiurge.ECONFLICT, "local agent edits must be saved or discarded")
}

func TestPromoteNoChanges(t *testing.T) {
	ctx := context.Background()
	_, r := newHome(t)
	run := startEdited(t, r, func(string) {})
	pr, err := r.Promote(ctx, run.ID, PromoteOptions{})
	if err != nil || pr.Promoted || pr.Summary != "evolve run "+run.ID+" has no proposal changes" {
		t.Fatalf("Promote = %+v, %v", pr, err)
	}
}

const mcpDecl = `transport: stdio
command: npx
args: ["-y", "@modelcontextprotocol/server-everything", "--api-key", "sk-live-abcdef123456"]
env:
  EVERYTHING_TOKEN: "tok-very-secret-value-999"
`

func TestPromoteRequiresTokenForMCPChange(t *testing.T) {
	ctx := context.Background()
	p, r := newHome(t)
	run := startEdited(t, r, func(a string) { writeFile(t, a, "assistant/agent/mcp/everything.yaml", mcpDecl) })
	rv, err := r.Review(ctx, run.ID, ReviewOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rv.Passed || !rv.ManualReviewRequired || !strings.HasPrefix(rv.ReviewToken, coregate.TokenPrefix) || len(rv.MCPChanges) != 1 {
		t.Fatalf("Review = %+v", rv)
	}
	ch := rv.MCPChanges[0]
	if ch.Change != "added" || ch.After.ServerID != "everything" || ch.After.EffectiveConnectApprovalPolicy != "prompt" || strings.Join(ch.After.EnvNames, ",") != "EVERYTHING_TOKEN" {
		t.Fatalf("change = %+v", ch.After)
	}
	for _, name := range []string{"review.json", "report.md", "gates.json", "proposal.json"} {
		s := readFile(t, run.Dir, name)
		for _, secret := range []string{"sk-live-abcdef123456", "tok-very-secret-value-999"} {
			if strings.Contains(s, secret) {
				t.Fatalf("%s leaks %q", name, secret)
			}
		}
	}
	if strings.Contains(rv.Diff, "sk-live") || !strings.Contains(rv.Diff, "+transport: stdio") {
		t.Fatalf("diff = %s", rv.Diff)
	}
	base := mustLive(t, r)
	for _, tok := range []string{"", coregate.TokenPrefix + strings.Repeat("0", 64)} {
		pr, err := r.Promote(ctx, run.ID, PromoteOptions{Token: tok})
		want := "evolve run " + run.ID + " requires manual MCP security review"
		if tok != "" {
			want += ": review token is malformed: want mcp-review:<subject>:<expiry>:<mac>"
		}
		if err != nil || pr.Promoted || pr.Summary != want {
			t.Fatalf("Promote(%q) = %+v, %v", tok, pr, err)
		}
	}
	for _, name := range []string{"review.json", "report.md", "gates.json"} {
		if s := readFile(t, run.Dir, name); strings.Contains(s, coregate.TokenPrefix) {
			t.Fatalf("%s holds the review token", name)
		}
	}
	if mustLive(t, r) != base {
		t.Fatal("live moved without the token")
	}
	// A change after review changes the token: the old one no longer fits.
	writeFile(t, run.AgentsDir, "assistant/agent/mcp/everything.yaml", strings.Replace(mcpDecl, "npx", "bunx", 1))
	pr, err := r.Promote(ctx, run.ID, PromoteOptions{Token: rv.ReviewToken})
	if err != nil || pr.Promoted || !strings.HasSuffix(pr.Summary, ": review token does not confirm this proposal") {
		t.Fatalf("Promote with a stale token = %+v, %v", pr, err)
	}
	if pr.Review.ReviewToken == rv.ReviewToken {
		t.Fatal("token did not change with the content")
	}
	pr, err = r.Promote(ctx, run.ID, PromoteOptions{Token: pr.Review.ReviewToken})
	if err != nil || !pr.Promoted {
		t.Fatalf("Promote with the token = %+v, %v", pr, err)
	}
	if !strings.Contains(readFile(t, p.Agents, "assistant/agent/mcp/everything.yaml"), "bunx") {
		t.Fatal("declaration not live")
	}
}

func TestPromoteRequiresTokenForApprovalLoosening(t *testing.T) {
	ctx := context.Background()
	_, r := newHome(t)
	run := startEdited(t, r, func(a string) {
		editFile(t, a, "assistant/agent.yaml", "  default: null", "  default: auto")
		editFile(t, a, "assistant/agent.yaml", "    session.read: {}", "    session.read: {}\n    secret.bind:GITHUB_TOKEN: {}")
	})
	rv, err := r.Review(ctx, run.ID, ReviewOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rv.ManualReviewRequired || len(rv.ApprovalChanges) != 1 || rv.ApprovalChanges[0].Key != "capabilities.defaults.secret.bind:GITHUB_TOKEN" {
		// default null -> auto adds no constraint; the new grant needs review.
		t.Fatalf("approval changes = %+v", rv.ApprovalChanges)
	}
	pr, err := r.Promote(ctx, run.ID, PromoteOptions{})
	if err != nil || pr.Promoted || pr.Summary != "evolve run "+run.ID+" requires manual approval security review" {
		t.Fatalf("Promote = %+v, %v", pr, err)
	}
	pr, err = r.Promote(ctx, run.ID, PromoteOptions{Token: rv.ReviewToken})
	if err != nil || !pr.Promoted {
		t.Fatalf("Promote with token = %+v, %v", pr, err)
	}
}

func TestReviewGateFailures(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		edit   func(t *testing.T, a string)
		phase  string
		detail string
	}{
		{"symlink", func(t *testing.T, a string) {
			if err := os.Symlink("/etc/passwd", filepath.Join(a, "assistant/agent/skills/passwd.md")); err != nil {
				t.Skip(err)
			}
		}, "path_safety", "assistant/agent/skills/passwd.md: symbolic links are not allowed"},
		{"node_modules", func(t *testing.T, a string) {
			writeFile(t, a, "assistant/agent/tools/echo/node_modules/x/index.js", "x")
		}, "artifact", "generated artifact directory node_modules/"},
		{"dependency", func(t *testing.T, a string) {
			writeFile(t, a, "assistant/agent/tools/echo/requirements.txt", "requests\n")
		}, "dependency", "assistant/agent/tools/echo/requirements.txt: dependency file requirements.txt"},
		{"broken agent.yaml", func(t *testing.T, a string) {
			editFile(t, a, "assistant/agent.yaml", "max_model_steps: 90", "max_model_steps: 900")
		}, "core_load:assistant", "runtime.max_model_steps must be between 1 and 90"},
		{"missing core", func(t *testing.T, a string) {
			editFile(t, a, "assistant/agent.yaml", "agents.spawn:evolver: {}", "agents.spawn:ghost: {}")
		}, "cross_core_references", `names core "ghost", which does not exist`},
		{"removed core", func(t *testing.T, a string) {
			if err := os.RemoveAll(filepath.Join(a, "evolver")); err != nil {
				t.Fatal(err)
			}
		}, "cross_core_references", `assistant/agent.yaml capabilities.defaults: agents.spawn:evolver names core "evolver"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, r := newHome(t)
			base := mustLive(t, r)
			run := startEdited(t, r, func(a string) { tc.edit(t, a) })
			rv, err := r.Review(ctx, run.ID, ReviewOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if rv.Passed {
				t.Fatalf("review passed: %+v", rv.Gates)
			}
			var g *coregate.Gate
			for i := range rv.Gates {
				if rv.Gates[i].Phase == tc.phase {
					g = &rv.Gates[i]
				}
			}
			if g == nil || g.Passed || !strings.Contains(g.Detail, tc.detail) {
				t.Fatalf("gate %s = %+v; gates %+v", tc.phase, g, rv.Gates)
			}
			pr, err := r.Promote(ctx, run.ID, PromoteOptions{})
			if err != nil || pr.Promoted || pr.Summary != "evolve run "+run.ID+" failed gates" {
				t.Fatalf("Promote = %+v, %v", pr, err)
			}
			if mustLive(t, r) != base {
				t.Fatal("live moved")
			}
		})
	}
}
