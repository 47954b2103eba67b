package slash_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/tui/slash"
)

func TestCoreAndVersions(t *testing.T) {
	h := newHost(t)
	env := newEnv(t, h)
	live, _, err := h.CoreRevisions()
	if err != nil {
		t.Fatal(err)
	}
	if got := run(t, env, "/core").Notice; got != "assistant@"+live {
		t.Fatalf("/core = %q, want assistant@%s", got, live)
	}
	contains(t, "/versions", run(t, env, "/versions").Notice, "```text\n* "+live[:12]+"  ", "\n```")
	contains(t, "/provider", run(t, env, "/provider").Notice, "fake · ")
}

func TestStatus(t *testing.T) {
	h := newHost(t)
	env := newEnv(t, h)
	out := run(t, env, "/status").Notice
	contains(t, "/status before a turn", out,
		"## Status\n\n", "key ", " | value", "\n| ---",
		"home ", h.Home().Dir, "agents_root", "host_config", "fallback_config", "workspace", env.workspace,
		"provider ", "fake", "provider_api_mode", "model", "base_url", "not configured",
		"tool_display", "summary", "runtime_timezone", "runtime_timezone_source", "runtime_local_now", "runtime_store",
		"background_tasks", "session_id", "(new: the next message starts it)", "session_messages",
		"has_compaction_summary", "false", "core_id", "assistant", "active_revision", "previous_revision", "revisions",
		"current_status", "idle", "busy_mode", "interrupt", "queued_inputs", "message_count")
	env.turn(t, "hello")
	env.busy, env.queue, env.display = true, []string{"next"}, slash.ToolFull
	out = run(t, env, "/status").Notice
	contains(t, "/status after a turn", out, "tool_display", "full", "session_id", env.session, "session_messages", "| 2",
		"current_status", "running", "queued_inputs", "| 1", "message_count", "| 2")
	for _, key := range []string{"session_id ", "provider ", "tool_display "} {
		if n := strings.Count(out, "\n| "+key); n != 1 {
			t.Errorf("/status has %d %q rows", n, key)
		}
	}
}

// TestStatusNeverShowsTheKey: a configured provider's key, and the
// password of its base URL, never reach the screen.
func TestStatusNeverShowsTheKey(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	config := "providers:\n  custom:\n    local:\n      api_mode: openai-chat\n      base_url: https://user:hunter2pw@llm.example.com/v1\n      api_key: sk-test-SECRET-123\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	h := openHost(t, host.Options{Home: home})
	env := newEnv(t, h)
	env.provider, env.model = "local", "m1"
	for _, line := range []string{"/status", "/provider"} {
		out := run(t, env, line).Notice
		contains(t, line, out, "local", "m1", "https://llm.example.com/v1")
		for _, secret := range []string{"sk-test-SECRET-123", "hunter2pw"} {
			if strings.Contains(out, secret) {
				t.Fatalf("%s shows %q:\n%s", line, secret, out)
			}
		}
	}
}

func TestDoctor(t *testing.T) {
	env := newEnv(t, newHost(t))
	out := run(t, env, "/doctor")
	contains(t, "/doctor", out.Notice, "## Doctor\n\n", "severity", "code", "message", "remediation", "checks passed")
}

func TestToolsSkillsAndSkill(t *testing.T) {
	h := newHost(t)
	env := newEnv(t, h)
	tools := run(t, env, "/tools").Notice
	contains(t, "/tools", tools, "## Tools\n\n", "name", "source", "risk", "capability", "approval", "output", "\n| read_file ", "builtin")
	contains(t, "/tools", tools, "\n| write_file ", "prompt")

	contains(t, "/skills", run(t, env, "/skills").Notice, "## Skills\n\n", "name", "category", "description", "linked", "\n| debugging ", "engineering", "disciplined loop", "0")
	contains(t, "/skills engineering", run(t, env, "/skills engineering").Notice, "debugging")
	if got := run(t, env, "/skills cooking").Notice; got != "No skills in category cooking." {
		t.Fatalf("/skills cooking = %q", got)
	}
	contains(t, "/skill debugging", run(t, env, "/skill debugging").Notice, "name: debugging", "# Debugging", "Reproduce")
	missing := run(t, env, "/skill nope")
	if missing.Level != slash.LevelWarning || !strings.Contains(missing.Notice, "skill not found: nope") || !strings.Contains(missing.Notice, "debugging") {
		t.Fatalf("/skill nope = %+v", missing)
	}

	// A packaged skill with a linked file, added to the agents tree: the
	// next read saves it as a revision and sees it.
	dir := filepath.Join(h.Home().CoreDir("assistant"), "agent", "skills", "deploy")
	if err := os.MkdirAll(filepath.Join(dir, "references"), 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("SKILL.md", "---\nname: deploy\ndescription: Ship a release.\ncategory: ops\n---\n# Deploy\n\nSee references/steps.sh.\n")
	write(filepath.Join("references", "steps.sh"), "make release\n```\necho done\n")
	contains(t, "/skills ops", run(t, env, "/skills ops").Notice, "\n| deploy ", "ops", "Ship a release.", "1")
	linked := run(t, env, "/skill deploy references/steps.sh").Notice
	if !strings.HasPrefix(linked, "````sh\nmake release\n```\necho done\n````") {
		t.Fatalf("linked file = %q, want it fenced whole", linked)
	}
	if got := run(t, env, "/skill deploy references/other.md"); !strings.Contains(got.Notice, "linked skill file not found or not allowed") {
		t.Fatalf("unlinked file = %+v", got)
	}
	if got := slash.Complete(t.Context(), env, "/skill de"); len(got) != 2 || got[0] != "/skill debugging" || got[1] != "/skill deploy" {
		t.Fatalf("skill completion = %q", got)
	}
	if got := slash.Complete(t.Context(), env, "/skills o"); len(got) != 1 || got[0] != "/skills ops" {
		t.Fatalf("category completion = %q", got)
	}
}

func TestToolDisplayAndBusy(t *testing.T) {
	env := &fakeEnv{busyMode: slash.BusyInterrupt, display: slash.ToolSummary}
	for _, c := range []struct {
		line, want string
		display    slash.ToolDisplay
		busy       slash.BusyMode
	}{
		{"/tool-display", "tool display: summary", slash.ToolSummary, slash.BusyInterrupt},
		{"/tool-display verbose", "tool display: full", slash.ToolFull, slash.BusyInterrupt},
		{"/tool-display OFF", "tool display: quiet", slash.ToolQuiet, slash.BusyInterrupt},
		{"/busy", "busy mode: interrupt", slash.ToolQuiet, slash.BusyInterrupt},
		{"/busy queue", "busy mode: queue", slash.ToolQuiet, slash.BusyQueue},
		{"/busy Interrupt", "busy mode: interrupt", slash.ToolQuiet, slash.BusyInterrupt},
	} {
		if got := run(t, env, c.line).Notice; got != c.want || env.display != c.display || env.busyMode != c.busy {
			t.Errorf("%s = %q (display %s, busy %s), want %q (%s, %s)", c.line, got, env.display, env.busyMode, c.want, c.display, c.busy)
		}
	}
}

func TestControl(t *testing.T) {
	env := &fakeEnv{}
	if got := run(t, env, "/interrupt").Notice; got != "no running turn" || len(env.interrupts) != 0 {
		t.Fatalf("/interrupt idle = %q %v", got, env.interrupts)
	}
	if got := run(t, env, "/queue").Notice; got != "No queued messages." {
		t.Fatalf("/queue empty = %q", got)
	}
	run(t, env, "/queue runs now")
	if len(env.enqueuedNow) != 1 || env.enqueuedNow[0] != "runs now" {
		t.Fatalf("idle /queue: %v", env.enqueuedNow)
	}

	env.busy = true
	if got := run(t, env, "/queue check the *logs* next").Notice; got != "Queued: check the *logs* next" {
		t.Fatalf("/queue = %q", got)
	}
	run(t, env, "/queue "+strings.Repeat("x", 200))
	list := run(t, env, "/queue").Notice
	contains(t, "/queue list", list, "## Queued messages\n\n1. check the \\*logs\\* next\n2. xxx", `\.\.\.`)
	if got := run(t, env, "/interrupt").Notice; got != "interrupting current turn: /interrupt" || len(env.interrupts) != 1 || len(env.queue) != 2 {
		t.Fatalf("/interrupt busy = %q %v, queue %v (kept)", got, env.interrupts, env.queue)
	}
	if got := run(t, env, "/stop").Notice; got != "Stopped current turn; cleared 2 queued message(s)." || len(env.queue) != 0 || env.interrupts[1] != "/stop" {
		t.Fatalf("/stop busy = %q, queue %v, interrupts %v", got, env.queue, env.interrupts)
	}
	env.busy = false
	if got := run(t, env, "/stop").Notice; got != "No running turn; cleared 0 queued message(s)." {
		t.Fatalf("/stop idle = %q", got)
	}
	for _, line := range []string{"/exit", "/quit", "/EXIT"} {
		if got := run(t, env, line); got.Action != slash.ActionExit || got.Notice != "" {
			t.Fatalf("%s = %+v", line, got)
		}
	}
}
