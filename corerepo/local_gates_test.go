package corerepo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/coregate"
	"github.com/demiurge/demiurge/internal/filelock"
)

func TestSaveGateFailures(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(t *testing.T, a string)
		detail string
	}{
		{"symlink", func(t *testing.T, a string) {
			if err := os.Symlink("/etc/passwd", filepath.Join(a, "assistant/agent/skills/passwd.md")); err != nil {
				t.Skip(err)
			}
		}, "path_safety: assistant/agent/skills/passwd.md: symbolic links are not allowed"},
		{"pycache", func(t *testing.T, a string) {
			writeFile(t, a, "assistant/agent/__pycache__/m.cpython-312.pyc", "\x00\x01")
		}, "artifact: assistant/agent/__pycache__/m.cpython-312.pyc: generated artifact directory __pycache__/"},
		{"pyc", func(t *testing.T, a string) {
			writeFile(t, a, "assistant/agent/tools/echo/module.pyc", "x")
		}, "artifact: assistant/agent/tools/echo/module.pyc: generated artifact *.pyc"},
		{"node_modules", func(t *testing.T, a string) {
			writeFile(t, a, "assistant/agent/node_modules/left-pad/index.js", "x")
		}, "artifact: assistant/agent/node_modules/left-pad/index.js: generated artifact directory node_modules/"},
		{"package.json", func(t *testing.T, a string) {
			writeFile(t, a, "assistant/package.json", "{}")
		}, "dependency: assistant/package.json: dependency file package.json"},
		{"requirements.txt", func(t *testing.T, a string) {
			writeFile(t, a, "assistant/agent/tools/echo/requirements.txt", "requests\n")
		}, "dependency: assistant/agent/tools/echo/requirements.txt: dependency file requirements.txt"},
		{"go.mod", func(t *testing.T, a string) {
			writeFile(t, a, "evolver/go.mod", "module x\n")
		}, "dependency: evolver/go.mod: dependency file go.mod"},
		{"broken agent.yaml", func(t *testing.T, a string) {
			editFile(t, a, "assistant/agent.yaml", "toolsets:", "toolset:")
		}, "core_load:assistant: agents/assistant/agent.yaml:"},
		{"missing core", func(t *testing.T, a string) {
			editFile(t, a, "assistant/agent.yaml", "agents.spawn:evolver: {}", "agents.spawn:ghost: {}")
		}, `cross_core_references: assistant/agent.yaml capabilities.defaults: agents.spawn:ghost names core "ghost", which does not exist`},
		{"nested git", func(t *testing.T, a string) {
			writeFile(t, a, "assistant/.git/config", "[core]\n")
		}, "path_safety: assistant/.git/config: nested git metadata (.git) is not allowed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, r := newHome(t)
			base := mustLive(t, r)
			tc.edit(t, p.Agents)
			_, err := r.Save(context.Background(), SaveOptions{})
			wantCode(t, err, demiurge.ECONFIG, "local agent edits failed gates: ")
			if !strings.Contains(err.Error(), tc.detail) {
				t.Fatalf("err = %q, want it to contain %q", err, tc.detail)
			}
			if strings.Count(err.Error(), "\n") > 0 {
				t.Fatalf("error is not one line: %q", err)
			}
			gateErr(t, err)
			_, err = r.EnsureSaved(context.Background())
			wantCode(t, err, demiurge.ECONFIG, tc.detail)
			if mustLive(t, r) != base {
				t.Fatal("live moved")
			}
			if st, _ := r.Status(); st.Clean {
				t.Fatal("the refused edit vanished")
			}
			mustClean(t, r)
		})
	}
}

func TestSaveRequiresTokenForLoosening(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		setup func(t *testing.T, a string) // a tightening, saved without a token
		edit  func(t *testing.T, a string)
		key   string
	}{
		{"approval default", func(t *testing.T, a string) {
			editFile(t, a, "assistant/agent.yaml", "  default: null", "  default: prompt")
		}, func(t *testing.T, a string) {
			editFile(t, a, "assistant/agent.yaml", "  default: prompt", "  default: auto")
		}, "approval.default prompt -> auto"},
		{"new capability", nil, func(t *testing.T, a string) {
			editFile(t, a, "assistant/agent.yaml", "    session.read: {}", "    session.read: {}\n    secret.bind:AWS_SECRET_ACCESS_KEY: {}")
		}, "capabilities.defaults.secret.bind:AWS_SECRET_ACCESS_KEY unset -> granted"},
		{"tool metadata", func(t *testing.T, a string) {
			editFile(t, a, "assistant/agent.yaml", "  metadata: {}", "  metadata:\n    echo: {approval_policy: deny}")
		}, func(t *testing.T, a string) {
			editFile(t, a, "assistant/agent.yaml", "approval_policy: deny", "approval_policy: auto")
		}, "tools.metadata.echo.approval_policy deny -> auto"},
		{"global fallback", func(t *testing.T, a string) {
			editFile(t, a, "agent.yaml", "  risks: {}", "  risks: {high: deny}")
		}, func(t *testing.T, a string) {
			editFile(t, a, "agent.yaml", "  risks: {high: deny}", "  risks: {}")
		}, "agent.yaml: approval.risks.high deny -> unset"},
		{"authored tool", nil, func(t *testing.T, a string) {
			editFile(t, a, "assistant/agent/tools/echo/tool.yaml", "capabilities: []", "capabilities: [terminal.exec]")
		}, "assistant/agent/tools/echo/tool.yaml: capabilities.terminal.exec unset -> granted"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, r := newHome(t)
			if tc.setup != nil {
				tc.setup(t, p.Agents)
				if _, err := r.Save(ctx, SaveOptions{}); err != nil {
					t.Fatalf("tightening needed a token: %v", err)
				}
			}
			base := mustLive(t, r)
			tc.edit(t, p.Agents)
			_, err := r.Save(ctx, SaveOptions{})
			wantCode(t, err, demiurge.ECONFIG, "local agent edits failed gates: approval_security: ")
			if !strings.Contains(err.Error(), tc.key) || !strings.Contains(err.Error(), "run `demiurge core save --confirm "+coregate.SaveTokenPrefix) {
				t.Fatalf("err = %q", err)
			}
			token := gateErr(t, err).Token
			if token == "" || !strings.Contains(err.Error(), token) {
				t.Fatalf("the message lacks the token %s", token)
			}
			// Before a turn the refusal names the command, never a token.
			_, err = r.EnsureSaved(ctx)
			wantCode(t, err, demiurge.ECONFIG, "operator confirmation required: run `demiurge core save` to confirm it")
			if strings.Contains(err.Error(), coregate.SaveTokenPrefix) || gateErr(t, err).Token != "" {
				t.Fatalf("EnsureSaved showed a token: %v", err)
			}
			_, err = r.Save(ctx, SaveOptions{Confirm: coregate.TokenPrefix + strings.Repeat("a", 64)})
			wantCode(t, err, demiurge.ECONFIG, "confirmation token is an evolve review token; want one starting confirm-save:; operator confirmation required: run `demiurge core save --confirm confirm-save:")
			if mustLive(t, r) != base {
				t.Fatal("live moved without the token")
			}
			res, err := r.Save(ctx, SaveOptions{Confirm: token})
			if err != nil || !res.Saved {
				t.Fatalf("Save with token = %+v, %v", res, err)
			}
		})
	}
}

func TestEnsureSaved(t *testing.T) {
	ctx := context.Background()
	p, r := newHome(t)
	base := mustLive(t, r)
	for range 3 {
		got, err := r.EnsureSaved(ctx)
		if err != nil || got != base {
			t.Fatalf("EnsureSaved = %s, %v; want %s", got, err, base)
		}
	}
	if vs, _ := r.Versions(0); len(vs) != 1 {
		t.Fatalf("EnsureSaved without edits made commits: %d", len(vs))
	}
	editFile(t, p.Agents, "assistant/agent/SOUL.md", "", "x\n")
	got, err := r.EnsureSaved(ctx)
	if err != nil || got == base || got != mustLive(t, r) {
		t.Fatalf("EnsureSaved = %s, %v", got, err)
	}
	// An edit that keeps size and mtime is still seen once the index
	// trusts the file's stat facts (ctime and inode change); that the
	// index trusts such a file is gitrepo's TestIndexTrustsOldFiles.
	abs := filepath.Join(p.Agents, "assistant/agent/SOUL.md")
	old := time.Now().Add(-time.Hour).Truncate(time.Millisecond).Add(123 * time.Microsecond)
	if err := os.Chtimes(abs, old, old); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * racySlackFine)
	if st, _ := r.Status(); !st.Clean { // refreshes the index
		t.Fatalf("status = %+v", st)
	}
	data, _ := os.ReadFile(abs)
	data[0] ^= 0x20
	if err := os.WriteFile(abs, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(abs, old, old); err != nil {
		t.Fatal(err)
	}
	if st, _ := r.Status(); st.Clean {
		t.Fatal("same-size same-mtime edit not detected")
	}
}

func TestLocked(t *testing.T) {
	p, r := newHome(t)
	l, err := filelock.TryLock(p.Lock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	editFile(t, p.Agents, "assistant/agent/SOUL.md", "", "x\n")
	_, err = r.Save(context.Background(), SaveOptions{})
	wantCode(t, err, demiurge.ECONFLICT, "core repository is locked: "+p.Lock)
	_, err = r.Rollback(context.Background(), "", "")
	wantCode(t, err, demiurge.ECONFLICT, "core repository is locked: ")
	l.Unlock()
	if _, err := r.Save(context.Background(), SaveOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestEnsureTemplateCore(t *testing.T) {
	ctx := context.Background()
	p := HomePaths(t.TempDir())
	if err := installOnly(p.Agents, "assistant", "global"); err != nil {
		t.Fatal(err)
	}
	r, _, err := Init(ctx, p, Options{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	editFile(t, p.Agents, "assistant/agent/SOUL.md", "", "unsaved\n")
	added, err := r.EnsureTemplateCore(ctx, "evolver")
	if err != nil || !added {
		t.Fatalf("EnsureTemplateCore = %v, %v", added, err)
	}
	vs, _ := r.Versions(1)
	if vs[0].Summary != "add runtime core evolver" {
		t.Fatalf("summary = %q", vs[0].Summary)
	}
	st, _ := r.Status()
	if len(st.Changes) != 1 || st.Changes[0].Path != "assistant/agent/SOUL.md" {
		t.Fatalf("other edits were not left alone: %+v", st)
	}
	if added, err := r.EnsureTemplateCore(ctx, "evolver"); err != nil || added {
		t.Fatalf("second EnsureTemplateCore = %v, %v", added, err)
	}
}

func TestInitIdempotent(t *testing.T) {
	p := HomePaths(t.TempDir())
	if err := installOnly(p.Agents, "assistant", "evolver", "global"); err != nil {
		t.Fatal(err)
	}
	r, res, err := Init(context.Background(), p, Options{}, "")
	if err != nil || !res.Created {
		t.Fatalf("Init = %+v, %v", res, err)
	}
	r2, res2, err := Init(context.Background(), p, Options{}, "")
	if err != nil || res2.Created || res2.Revision != mustLive(t, r) || len(res2.Baseline) != 0 {
		t.Fatalf("second Init = %+v, %v", res2, err)
	}
	mustClean(t, r2)
}
