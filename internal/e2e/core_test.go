package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// coreJSON runs `demiurge core ARGS... --json`, decodes stdout into v (when
// v is not nil and stdout is not empty) and returns the result.
func (e *env) coreJSON(v any, args ...string) result {
	e.t.Helper()
	r := e.run("", append(append([]string{"core"}, args...), "--json")...)
	if v != nil && strings.TrimSpace(r.stdout) != "" {
		if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
			e.t.Fatalf("core %v --json: exit %d, stdout %q, stderr %q: %v", args, r.code, r.stdout, r.stderr, err)
		}
	}
	return r
}

// fakeScript writes a fake provider script of the given responses.
func (e *env) evolverScript(name string, responses ...map[string]any) string {
	e.t.Helper()
	b, err := json.Marshal(responses)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.writeFile(name, string(b))
}

// evolverWrite is one fake response whose tool call writes path (relative to
// the evolver's workspace, the run tree) with content.
func evolverWrite(path, content string) map[string]any {
	return map[string]any{"tool_calls": []map[string]any{{"name": "write_file", "arguments": map[string]any{"path": path, "content": content}}}}
}

func evolverReply(text string) map[string]any { return map[string]any{"content": text} }

type evolveStartOut struct {
	RunID        string           `json:"run_id"`
	TargetCoreID string           `json:"target_core_id"`
	AgentsRoot   string           `json:"agents_root"`
	Summary      string           `json:"summary"`
	ChangedFiles []coreFileChange `json:"changed_files"`
	Promoted     bool             `json:"promoted"`
}

type coreFileChange struct {
	Path   string `json:"path"`
	Change string `json:"change"`
}

type evolveReviewOut struct {
	RunID                string  `json:"run_id"`
	BaseRevision         string  `json:"base_revision"`
	ProposalRevision     *string `json:"proposal_revision"`
	Passed               bool    `json:"passed"`
	Stale                bool    `json:"stale"`
	ManualReviewRequired bool    `json:"manual_review_required"`
	ReviewToken          string  `json:"review_token"`
	ApprovalChanges      []struct {
		Path string `json:"path"`
		Key  string `json:"key"`
	} `json:"approval_changes"`
	Gates []struct {
		Phase  string `json:"phase"`
		Passed bool   `json:"passed"`
	} `json:"gates"`
}

type evolvePromoteOut struct {
	RunID       string  `json:"run_id"`
	Promoted    bool    `json:"promoted"`
	NewRevision *string `json:"new_revision"`
	Summary     string  `json:"summary"`
	Error       *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

type coreStatusOut struct {
	Revision string           `json:"revision"`
	Previous string           `json:"previous_revision"`
	Clean    bool             `json:"clean"`
	Changes  []coreFileChange `json:"changes"`
}

type coreVersionOut struct {
	Revision string `json:"revision"`
	Summary  string `json:"summary"`
	Live     bool   `json:"live"`
	Previous bool   `json:"previous"`
}

// evolveStart runs `core evolve start` with the evolver's fake responses
// and returns the start result.
func (e *env) evolveStart(goal string, responses ...map[string]any) evolveStartOut {
	e.t.Helper()
	script := e.evolverScript("evolver-"+strings.ReplaceAll(goal, " ", "_")+".json", responses...)
	var out evolveStartOut
	r := e.coreJSON(&out, "evolve", "start", "--fake-script", script, goal)
	if r.code != 0 || out.RunID == "" {
		e.t.Fatalf("evolve start: exit %d %+v stderr %s", r.code, out, r.stderr)
	}
	return out
}

func (e *env) coreStatus() coreStatusOut {
	e.t.Helper()
	var st coreStatusOut
	if r := e.coreJSON(&st, "status"); r.code != 0 {
		e.t.Fatalf("core status: exit %d %s", r.code, r.stderr)
	}
	return st
}

func (e *env) coreVersions() []coreVersionOut {
	e.t.Helper()
	var vs []coreVersionOut
	if r := e.coreJSON(&vs, "versions"); r.code != 0 {
		e.t.Fatalf("core versions: exit %d %s", r.code, r.stderr)
	}
	return vs
}

func (e *env) soulPath() string {
	return filepath.Join(e.home, "agents", "assistant", "agent", "SOUL.md")
}

func coreRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// promptRecorder is an OpenAI-compatible endpoint that records the
// system message of each request.
type promptRecorder struct {
	srv     *httptest.Server
	mu      sync.Mutex // guards prompts
	prompts []string
}

func newPromptRecorder(t *testing.T) *promptRecorder {
	s := &promptRecorder{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		var sys []string
		for _, m := range req.Messages {
			if m.Role == "system" {
				b, _ := json.Marshal(m.Content)
				sys = append(sys, string(b))
			}
		}
		s.mu.Lock()
		s.prompts = append(s.prompts, strings.Join(sys, "\n"))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"ok"}}]}`)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *promptRecorder) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.prompts) == 0 {
		return ""
	}
	return s.prompts[len(s.prompts)-1]
}

// runOpenAI runs one turn against the recording server and returns the
// turn and the system prompt the model saw.
func (e *env) runOpenAI(s *promptRecorder, text string) (runOut, string) {
	e.t.Helper()
	saved := e.extra
	e.extra = append(append([]string{}, saved...), "OPENAI_API_KEY=sk-e2e-core", "OPENAI_BASE_URL="+s.srv.URL+"/v1")
	defer func() { e.extra = saved }()
	out, r := e.runJSON("--provider", "openai", "--model", "m1", text)
	if r.code != 0 || out.Outcome != "completed" {
		e.t.Fatalf("run: exit %d %+v %s", r.code, out, r.stderr)
	}
	return out, s.last()
}

func TestCoreEvolveStartReviewPromoteRollback(t *testing.T) {
	e := newEnv(t)
	llm := newPromptRecorder(t)
	before, prompt := e.runOpenAI(llm, "hello")
	oldSoul := coreRead(t, e.soulPath())
	if !strings.Contains(prompt, "Demiurge assistant") {
		t.Fatalf("first turn's system prompt lacks the template SOUL: %q", prompt)
	}

	const newSoul = "# Evolved assistant\n\nYou answer in haiku.\n"
	start := e.evolveStart("answer in haiku", evolverWrite("assistant/agent/SOUL.md", newSoul), evolverReply("rewrote SOUL.md"))
	if start.TargetCoreID != "assistant" || len(start.ChangedFiles) != 1 || start.ChangedFiles[0].Path != "assistant/agent/SOUL.md" {
		t.Fatalf("start %+v", start)
	}
	if got := coreRead(t, filepath.Join(start.AgentsRoot, "assistant", "agent", "SOUL.md")); got != newSoul {
		t.Fatalf("run tree SOUL.md = %q", got)
	}
	if got := coreRead(t, e.soulPath()); got != oldSoul {
		t.Fatal("evolve start changed the live tree")
	}

	var rv evolveReviewOut
	if r := e.coreJSON(&rv, "evolve", "review", start.RunID); r.code != 0 || !rv.Passed || rv.ProposalRevision == nil || rv.ManualReviewRequired {
		t.Fatalf("review: exit %d %+v %s", r.code, rv, r.stderr)
	}
	if rv.BaseRevision != before.CoreRevision {
		t.Fatalf("base %s, want the live revision %s", rv.BaseRevision, before.CoreRevision)
	}
	var pr evolvePromoteOut
	if r := e.coreJSON(&pr, "evolve", "promote", start.RunID); r.code != 0 || !pr.Promoted || pr.NewRevision == nil || *pr.NewRevision != *rv.ProposalRevision {
		t.Fatalf("promote: exit %d %+v %s", r.code, pr, r.stderr)
	}

	after, prompt := e.runOpenAI(llm, "hello again")
	if after.CoreRevision != *pr.NewRevision {
		t.Fatalf("core_revision after promote %s, want %s", after.CoreRevision, *pr.NewRevision)
	}
	if got := coreRead(t, e.soulPath()); got != newSoul {
		t.Fatalf("live SOUL.md = %q", got)
	}
	if !strings.Contains(prompt, "You answer in haiku.") || strings.Contains(prompt, "Demiurge assistant") {
		t.Fatalf("the promoted SOUL.md is not the system prompt: %q", prompt)
	}

	var rb struct {
		Revision string `json:"revision"`
		Previous string `json:"previous_revision"`
		Target   string `json:"target_revision"`
	}
	if r := e.coreJSON(&rb, "rollback"); r.code != 0 || rb.Previous != *pr.NewRevision || rb.Target != before.CoreRevision {
		t.Fatalf("rollback: exit %d %+v %s", r.code, rb, r.stderr)
	}
	if got := coreRead(t, e.soulPath()); got != oldSoul {
		t.Fatalf("SOUL.md after rollback = %q", got)
	}
	rolled, prompt := e.runOpenAI(llm, "and again")
	if rolled.CoreRevision != rb.Revision || rolled.CoreRevision == before.CoreRevision || rolled.CoreRevision == after.CoreRevision {
		t.Fatalf("core_revision after rollback %s (rollback %s, first %s, promoted %s)", rolled.CoreRevision, rb.Revision, before.CoreRevision, after.CoreRevision)
	}
	if !strings.Contains(prompt, "Demiurge assistant") {
		t.Fatalf("rollback did not restore the system prompt: %q", prompt)
	}
	vs := e.coreVersions()
	if len(vs) != 3 || !vs[0].Live || vs[0].Revision != rb.Revision || !vs[1].Previous || vs[1].Revision != *pr.NewRevision || vs[2].Revision != before.CoreRevision {
		t.Fatalf("versions %+v", vs)
	}

	// A discarded run is gone.
	if r := e.coreJSON(nil, "evolve", "discard", start.RunID); r.code != 0 {
		t.Fatalf("discard run: exit %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.home, "runtime", "evolve", start.RunID)); !os.IsNotExist(err) {
		t.Fatalf("run dir still there: %v", err)
	}
	r := e.coreJSON(nil, "evolve", "review", start.RunID)
	if r.code != 1 || !strings.Contains(r.stderr, "evolve run not found: "+start.RunID) {
		t.Fatalf("review of a discarded run: exit %d %s", r.code, r.stderr)
	}
}

func TestCoreEvolveLooseningNeedsManualReviewToken(t *testing.T) {
	e := newEnv(t)
	if r := e.run("", "init"); r.code != 0 {
		t.Fatalf("init: %s", r.stderr)
	}
	manifest := coreRead(t, filepath.Join(e.home, "agents", "assistant", "agent.yaml"))
	// A new capability grant is authority the evolver may not give itself.
	loose := strings.Replace(manifest, "    session.read: {}\n", "    session.read: {}\n    secret.bind:DEPLOY_TOKEN: {}\n", 1)
	if loose == manifest {
		t.Fatal("template agent.yaml has no `session.read` grant to add after")
	}
	live := e.coreStatus().Revision
	start := e.evolveStart("deploy access", evolverWrite("assistant/agent.yaml", loose), evolverReply("granted secret.bind"))

	var rv evolveReviewOut
	if r := e.coreJSON(&rv, "evolve", "review", start.RunID); r.code != 0 || !rv.Passed || !rv.ManualReviewRequired || !strings.HasPrefix(rv.ReviewToken, "mcp-review:") {
		t.Fatalf("review: exit %d %+v %s", r.code, rv, r.stderr)
	}
	if len(rv.ApprovalChanges) == 0 || rv.ApprovalChanges[0].Key != "capabilities.defaults.secret.bind:DEPLOY_TOKEN" {
		t.Fatalf("approval changes %+v", rv.ApprovalChanges)
	}
	text := e.run("", "core", "evolve", "review", start.RunID)
	// Each review issues a token with its own expiry (to the second), so
	// the text's token is this run's, not necessarily the JSON one's.
	if !strings.Contains(text.stdout, "manual review token: mcp-review:"+start.RunID+":") || !strings.Contains(text.stdout, "review "+start.RunID+": passed") {
		t.Fatalf("review text %q", text.stdout)
	}

	for _, args := range [][]string{
		{"evolve", "promote", start.RunID},
		{"evolve", "promote", start.RunID, "--manual-review-token", "mcp-review:0000"},
		{"evolve", "promote", start.RunID, "--manual-review-token", rv.ReviewToken + "0"},
	} {
		var pr evolvePromoteOut
		r := e.coreJSON(&pr, args...)
		if r.code != 1 || pr.Promoted || pr.NewRevision != nil || !strings.Contains(pr.Summary, "requires manual") {
			t.Fatalf("%v: exit %d %+v %s", args, r.code, pr, r.stderr)
		}
		if got := e.coreStatus().Revision; got != live {
			t.Fatalf("%v moved live to %s", args, got)
		}
	}
	var pr evolvePromoteOut
	if r := e.coreJSON(&pr, "evolve", "promote", start.RunID, "--manual-review-token", rv.ReviewToken); r.code != 0 || !pr.Promoted || pr.NewRevision == nil {
		t.Fatalf("promote with the token: exit %d %+v %s", r.code, pr, r.stderr)
	}
	if got := coreRead(t, filepath.Join(e.home, "agents", "assistant", "agent.yaml")); got != loose {
		t.Fatal("live agent.yaml is not the reviewed proposal")
	}
	if st := e.coreStatus(); st.Revision != *pr.NewRevision || !st.Clean {
		t.Fatalf("status after promote %+v", st)
	}
}

func TestCoreEvolveStaleProposalIsRefused(t *testing.T) {
	e := newEnv(t)
	a := e.evolveStart("first change", evolverWrite("assistant/agent/SOUL.md", "# A\n"), evolverReply("a"))
	b := e.evolveStart("second change", evolverWrite("assistant/agent/skills/extra.md", "---\nname: extra\ndescription: extra skill\n---\nBody.\n"), evolverReply("b"))
	var ra, rb evolveReviewOut
	if r := e.coreJSON(&ra, "evolve", "review", a.RunID); r.code != 0 {
		t.Fatalf("review a: %d %s", r.code, r.stderr)
	}
	if r := e.coreJSON(&rb, "evolve", "review", b.RunID); r.code != 0 || rb.BaseRevision != ra.BaseRevision {
		t.Fatalf("review b: %d %+v %s", r.code, rb, r.stderr)
	}
	var pa evolvePromoteOut
	if r := e.coreJSON(&pa, "evolve", "promote", a.RunID); r.code != 0 || !pa.Promoted {
		t.Fatalf("promote a: %d %+v %s", r.code, pa, r.stderr)
	}
	live := *pa.NewRevision
	want := "stale core proposal: run_id=" + b.RunID + " base=" + rb.BaseRevision + " current=" + live + "; review or rebase the evolve run before promoting"
	var pb evolvePromoteOut
	r := e.coreJSON(&pb, "evolve", "promote", b.RunID)
	if r.code != 1 || pb.Promoted || pb.Error == nil || pb.Error.Message != want || !strings.Contains(r.stderr, want) {
		t.Fatalf("stale promote: exit %d %+v stderr %q, want %q", r.code, pb, r.stderr, want)
	}
	if got := e.coreStatus().Revision; got != live {
		t.Fatalf("live moved to %s", got)
	}
	// A review of the stale run says so.
	var again evolveReviewOut
	if r := e.coreJSON(&again, "evolve", "review", b.RunID); !again.Stale || r.code != 0 {
		t.Fatalf("review of the stale run: exit %d %+v", r.code, again)
	}

	// A saved local edit makes a reviewed proposal stale too.
	c := e.evolveStart("third change", evolverWrite("assistant/agent/SOUL.md", "# C\n"), evolverReply("c"))
	if r := e.coreJSON(nil, "evolve", "review", c.RunID); r.code != 0 {
		t.Fatalf("review c: %d %s", r.code, r.stderr)
	}
	if err := os.WriteFile(e.soulPath(), []byte("# hand edit\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Unsaved edits block every revision switch.
	r = e.run("", "core", "evolve", "promote", c.RunID)
	if r.code != 1 || !strings.Contains(r.stderr, "local agent edits must be saved or discarded before switching core revisions: ['assistant/agent/SOUL.md']; run `demiurge core save` or `demiurge core discard --yes`") {
		t.Fatalf("promote over unsaved edits: exit %d %s", r.code, r.stderr)
	}
	var saved struct {
		Saved    bool   `json:"saved"`
		Revision string `json:"revision"`
	}
	if r := e.coreJSON(&saved, "save", "--reason", "hand edit"); r.code != 0 || !saved.Saved {
		t.Fatalf("save: %d %+v %s", r.code, saved, r.stderr)
	}
	r = e.run("", "core", "evolve", "promote", c.RunID)
	if r.code != 1 || !strings.Contains(r.stderr, "stale core proposal: run_id="+c.RunID+" base="+live+" current="+saved.Revision+";") {
		t.Fatalf("promote after a saved edit: exit %d %s", r.code, r.stderr)
	}
}

func TestCoreCommandUsage(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"core", "discard"}, 2, "discard requires --yes"},
		{[]string{"core", "evolve", "start"}, 2, "goal is required"},
		{[]string{"core", "evolve", "start", "  "}, 2, "goal is required"},
		{[]string{"core", "evolve", "review"}, 2, "accepts 1 arg"},
		{[]string{"core", "evolve", "promote", "evolve_nope"}, 1, "evolve run not found: evolve_nope"},
		{[]string{"core", "evolve", "discard", "evolve_nope"}, 1, "evolve_nope"},
		{[]string{"core", "rollback"}, 1, "no previous core revision recorded"},
		{[]string{"core", "rollback", "0123456789abcdef0123456789abcdef01234567"}, 1, "core revision not found"},
		{[]string{"core", "versions", "--limit", "0"}, 2, "--limit must be at least 1"},
		{[]string{"--core", "nosuch", "core", "evolve", "start", "goal"}, 2, "nosuch"},
	} {
		r := e.run("", tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("%v: exit %d stderr %q, want %d and %q", tc.args, r.code, r.stderr, tc.code, tc.msg)
		}
	}
}

func TestCoreEvolveMCPReviewIsSecretSafe(t *testing.T) {
	e := newEnv(t)
	const decl = "enabled: true\ntransport: stdio\ncommand: npx\nargs: [\"-y\", \"some-server\", \"--token=abc123SECRETvalue\"]\nenv:\n  API_KEY: envSECRETvalue\n"
	start := e.evolveStart("add mcp", evolverWrite("assistant/agent/mcp/files.yaml", decl), evolverReply("declared an MCP server"))
	var rv evolveReviewOut
	r := e.coreJSON(&rv, "evolve", "review", start.RunID)
	if r.code != 0 || !rv.Passed || !rv.ManualReviewRequired || rv.ReviewToken == "" {
		t.Fatalf("review: exit %d %+v %s", r.code, rv, r.stderr)
	}
	text := e.run("", "core", "evolve", "review", start.RunID)
	for _, out := range []string{r.stdout, text.stdout, text.stderr} {
		if strings.Contains(out, "abc123SECRETvalue") || strings.Contains(out, "envSECRETvalue") {
			t.Fatalf("review output shows a credential:\n%s", out)
		}
	}
	if !strings.Contains(text.stdout, "mcp change: added assistant/agent/mcp/files.yaml") || !strings.Contains(text.stdout, "env=API_KEY") || !strings.Contains(text.stdout, "command=npx -y some-server") {
		t.Fatalf("review text lacks the MCP summary:\n%s", text.stdout)
	}
	p := e.run("", "core", "evolve", "promote", start.RunID)
	if p.code != 1 || !strings.Contains(p.stdout, "evolve run "+start.RunID+" requires manual MCP security review") || strings.Contains(p.stdout, rv.ReviewToken) {
		t.Fatalf("promote without the token: exit %d %q", p.code, p.stdout)
	}
	var pr evolvePromoteOut
	if r := e.coreJSON(&pr, "evolve", "promote", start.RunID, "--manual-review-token", rv.ReviewToken); r.code != 0 || !pr.Promoted {
		t.Fatalf("promote with the token: exit %d %+v %s", r.code, pr, r.stderr)
	}
}
