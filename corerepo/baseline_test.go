package corerepo

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/coregate"
	"github.com/demiurge/demiurge/coretree"
	"github.com/demiurge/demiurge/gitrepo"
)

const (
	grantOld = "    session.read: {}\n"
	grantNew = "    session.read: {}\n    secret.bind:DEPLOY_TOKEN: {}\n"
	grantKey = "assistant/agent.yaml: capabilities.defaults.secret.bind:DEPLOY_TOKEN unset -> granted"
)

// embeddedFiles reads the embedded templates straight from core's file
// system: path relative to the agents root -> content.
func embeddedFiles(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	tfs := core.TemplateFS()
	err := fs.WalkDir(tfs, "agents", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(tfs, name)
		out[strings.TrimPrefix(name, "agents/")] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// liveFiles reads every file of the live revision.
func liveFiles(t *testing.T, r *Repo) map[string]string {
	t.Helper()
	live, err := r.git.Live()
	if err != nil {
		t.Fatal(err)
	}
	files, err := r.git.Files(live)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for p, e := range files {
		data, err := r.git.Blob(e.Hash)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = string(data)
	}
	return out
}

// installedHome installs every template into a new home; no repository.
func installedHome(t *testing.T) Paths {
	t.Helper()
	p := HomePaths(t.TempDir())
	if err := installOnly(p.Agents, core.TemplateAll); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustInit(t *testing.T, p Paths) (*Repo, InitResult) {
	t.Helper()
	r, res, err := Init(context.Background(), p, Options{}, "test")
	if err != nil || !res.Created {
		t.Fatalf("Init = %+v, %v", res, err)
	}
	return r, res
}

func changesOf(t *testing.T, r *Repo) []coretree.Change {
	t.Helper()
	st, err := r.Status()
	if err != nil {
		t.Fatal(err)
	}
	return st.Changes
}

// wantBlocked asserts that EnsureSaved refuses the loosening key without
// a token and that live stays at base.
func wantBlocked(t *testing.T, r *Repo, base, key string) {
	t.Helper()
	_, err := r.EnsureSaved(context.Background())
	wantCode(t, err, demiurge.ECONFIG, "local agent edits failed gates: approval_security: ")
	if !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "operator confirmation required: run `demiurge core save` to confirm it") {
		t.Fatalf("EnsureSaved err = %q, want it to name %q and the command", err, key)
	}
	if strings.Contains(err.Error(), coregate.SaveTokenPrefix) {
		t.Fatalf("EnsureSaved showed a token: %v", err)
	}
	if got := mustLive(t, r); got != base {
		t.Fatalf("live moved to %s without the token", got)
	}
}

// confirmSave saves the pending edits with the token Save issues, and
// returns the new live revision.
func confirmSave(t *testing.T, r *Repo, key string) string {
	t.Helper()
	ctx := context.Background()
	_, err := r.Save(ctx, SaveOptions{})
	wantCode(t, err, demiurge.ECONFIG, key)
	token := gateErr(t, err).Token
	if !strings.HasPrefix(token, coregate.SaveTokenPrefix) || !strings.Contains(err.Error(), "run `demiurge core save --confirm "+token+"`") {
		t.Fatalf("Save refusal %q lacks its token %q", err, token)
	}
	res, err := r.Save(ctx, SaveOptions{Confirm: token})
	if err != nil || !res.Saved {
		t.Fatalf("Save with token = %+v, %v", res, err)
	}
	return res.Revision
}

func TestInitBaselineIsTheEmbeddedTemplates(t *testing.T) {
	p := installedHome(t)
	r, res := mustInit(t, p)
	if want := []string{"assistant", "evolver", "global"}; !reflect.DeepEqual(res.Baseline, want) {
		t.Fatalf("Baseline = %v, want %v", res.Baseline, want)
	}
	if got, want := liveFiles(t, r), embeddedFiles(t); !reflect.DeepEqual(got, want) {
		t.Fatalf("live holds %d files, the templates %d; they differ", len(got), len(want))
	}
	mustClean(t, r)
	if ch := changesOf(t, r); len(ch) != 0 {
		t.Fatalf("a fresh home has local edits: %+v", ch)
	}
	// A fresh home's first turn just runs: nothing to save, live as is.
	rev, err := r.EnsureSaved(context.Background())
	if err != nil || rev != res.Revision {
		t.Fatalf("EnsureSaved = %s, %v; want %s", rev, err, res.Revision)
	}
	vs, _ := r.Versions(5)
	if len(vs) != 1 || vs[0].Summary != "core init" || !strings.Contains(vs[0].Message, "Baseline: embedded templates of assistant, evolver, global fallback") {
		t.Fatalf("versions = %+v", vs)
	}
}

func TestEditBeforeFirstOpenIsALocalEdit(t *testing.T) {
	ctx := context.Background()
	t.Run("loosening needs the token", func(t *testing.T) {
		p := installedHome(t)
		editFile(t, p.Agents, "assistant/agent.yaml", grantOld, grantNew)
		edited := readFile(t, p.Agents, "assistant/agent.yaml")
		r, res := mustInit(t, p)
		if got := liveFiles(t, r)["assistant/agent.yaml"]; got != embeddedFiles(t)["assistant/agent.yaml"] {
			t.Fatal("init committed the edited manifest as the baseline")
		}
		if ch := changesOf(t, r); len(ch) != 1 || ch[0] != (coretree.Change{Path: "assistant/agent.yaml", Kind: coretree.Modified}) {
			t.Fatalf("status = %+v", ch)
		}
		wantBlocked(t, r, res.Revision, grantKey)
		if readFile(t, p.Agents, "assistant/agent.yaml") != edited {
			t.Fatal("a refused save touched the edited file")
		}
		mustClean(t, r)
		rev := confirmSave(t, r, grantKey)
		if got := liveFiles(t, r)["assistant/agent.yaml"]; got != edited {
			t.Fatal("the confirmed save did not commit the edit")
		}
		if got, err := r.EnsureSaved(ctx); err != nil || got != rev {
			t.Fatalf("EnsureSaved after the confirmed save = %s, %v", got, err)
		}
	})
	t.Run("tightening is saved", func(t *testing.T) {
		p := installedHome(t)
		editFile(t, p.Agents, "assistant/agent.yaml", "    network.fetch: {}\n", "")
		editFile(t, p.Agents, "assistant/agent.yaml", "  default: null", "  default: prompt")
		r, res := mustInit(t, p)
		rev, err := r.EnsureSaved(ctx)
		if err != nil || rev == res.Revision {
			t.Fatalf("EnsureSaved = %s, %v; want a new revision", rev, err)
		}
		if got := liveFiles(t, r)["assistant/agent.yaml"]; got != readFile(t, p.Agents, "assistant/agent.yaml") {
			t.Fatal("the tightening was not saved")
		}
		vs, _ := r.Versions(2)
		if vs[0].Summary != "update assistant config" || vs[1].Summary != "core init" {
			t.Fatalf("versions = %+v", vs)
		}
	})
	t.Run("other gates still apply", func(t *testing.T) {
		p := installedHome(t)
		writeFile(t, p.Agents, "assistant/requirements.txt", "x")
		r, res := mustInit(t, p)
		_, err := r.EnsureSaved(ctx)
		wantCode(t, err, demiurge.ECONFIG, "local agent edits failed gates: dependency: assistant/requirements.txt")
		if mustLive(t, r) != res.Revision {
			t.Fatal("a failed gate moved live")
		}
	})
}

// Deleting runtime/core.git forgets every confirmation: the new baseline
// holds the templates only, so nothing confirmed before, and nothing
// added meanwhile, is live until it passes the gates again.
func TestDeletedRepository(t *testing.T) {
	ctx := context.Background()
	t.Run("templates unchanged are the baseline", func(t *testing.T) {
		p, r := newHome(t)
		editFile(t, p.Agents, "assistant/agent/SOUL.md", "", "Be brief.\n")
		if _, err := r.Save(ctx, SaveOptions{}); err != nil {
			t.Fatal(err)
		}
		removeAll(t, p.GitDir)
		r2, res := mustInit(t, p)
		if got, want := liveFiles(t, r2), embeddedFiles(t); !reflect.DeepEqual(got, want) {
			t.Fatal("the new baseline is not the templates")
		}
		// The neutral edit is a local edit again, saved without a token.
		if ch := changesOf(t, r2); len(ch) != 1 || ch[0].Path != "assistant/agent/SOUL.md" {
			t.Fatalf("status = %+v", ch)
		}
		rev, err := r2.EnsureSaved(ctx)
		if err != nil || rev == res.Revision {
			t.Fatalf("EnsureSaved = %s, %v", rev, err)
		}
	})
	t.Run("a loosened tree is blocked", func(t *testing.T) {
		p, r := newHome(t)
		editFile(t, p.Agents, "assistant/agent.yaml", grantOld, grantNew)
		confirmSave(t, r, grantKey) // confirmed once, in the old repository
		removeAll(t, p.GitDir)
		r2, res := mustInit(t, p)
		wantBlocked(t, r2, res.Revision, grantKey)
		confirmSave(t, r2, grantKey)
	})
	t.Run("live ref removed", func(t *testing.T) {
		p, _ := newHome(t)
		editFile(t, p.Agents, "assistant/agent.yaml", grantOld, grantNew)
		if err := os.Remove(filepath.Join(p.GitDir, filepath.FromSlash(gitrepo.RefLive))); err != nil {
			t.Fatal(err)
		}
		r2, res := mustInit(t, p)
		wantBlocked(t, r2, res.Revision, grantKey)
	})
	t.Run("a core of its own is judged against nothing", func(t *testing.T) {
		p, r := newHome(t)
		addCore(t, p.Agents, "research")
		if _, err := r.Save(ctx, SaveOptions{}); err == nil {
			t.Fatal("a new core with grants saved without a token")
		}
		confirmSave(t, r, "research/agent.yaml: capabilities.defaults.fs.read unset -> granted")
		removeAll(t, p.GitDir)
		r2, res := mustInit(t, p)
		if _, ok := liveFiles(t, r2)["research/agent.yaml"]; ok {
			t.Fatal("a core the templates lack is in the baseline")
		}
		wantBlocked(t, r2, res.Revision, "research/agent.yaml: capabilities.defaults.fs.read unset -> granted")
	})
}

func TestInitBaselineEmptyWithoutTemplateManifests(t *testing.T) {
	p := HomePaths(t.TempDir())
	addCore(t, p.Agents, "research")
	r, res := mustInit(t, p)
	if len(res.Baseline) != 0 || len(liveFiles(t, r)) != 0 {
		t.Fatalf("baseline %v with %d files, want empty", res.Baseline, len(liveFiles(t, r)))
	}
	vs, _ := r.Versions(1)
	if !strings.Contains(vs[0].Message, "Baseline: empty") {
		t.Fatalf("message = %q", vs[0].Message)
	}
	wantBlocked(t, r, res.Revision, "research/agent.yaml: capabilities.defaults.fs.read unset -> granted")
}

// A loosened core left on disk where the live revision has none (a home
// of an older version, a removed core) is not committed by the template
// installation: the template is, and the file stays a local edit.
func TestEnsureTemplateCoreCommitsTheTemplateNotTheTree(t *testing.T) {
	ctx := context.Background()
	p := HomePaths(t.TempDir())
	if err := installOnly(p.Agents, "evolver", "global"); err != nil {
		t.Fatal(err)
	}
	r, res := mustInit(t, p)
	if want := []string{"evolver", "global"}; !reflect.DeepEqual(res.Baseline, want) {
		t.Fatalf("Baseline = %v, want %v", res.Baseline, want)
	}
	if err := installOnly(p.Agents, "assistant"); err != nil {
		t.Fatal(err)
	}
	editFile(t, p.Agents, "assistant/agent.yaml", grantOld, grantNew)
	removeFile(t, p.Agents, "assistant/agent/skills/debugging.md")
	added, err := r.EnsureTemplateCore(ctx, "assistant")
	if err != nil || !added {
		t.Fatalf("EnsureTemplateCore = %v, %v", added, err)
	}
	mustClean(t, r)
	if got, want := liveFiles(t, r), embeddedFiles(t); !reflect.DeepEqual(got, want) {
		t.Fatal("live is not the templates after adding the assistant core")
	}
	if !exists(p.Agents, "assistant/agent/skills/debugging.md") {
		t.Fatal("the missing template file was not installed")
	}
	if ch := changesOf(t, r); len(ch) != 1 || ch[0] != (coretree.Change{Path: "assistant/agent.yaml", Kind: coretree.Modified}) {
		t.Fatalf("status = %+v", ch)
	}
	vs, _ := r.Versions(1)
	if vs[0].Summary != "add runtime core assistant" || !strings.Contains(vs[0].Message, "Source: embedded template") {
		t.Fatalf("version = %+v", vs[0])
	}
	wantBlocked(t, r, mustLive(t, r), grantKey)
}

// addCore writes a core of its own at agents/<id>: the evolver template
// under another id (it grants fs.read and more).
func addCore(t *testing.T, agents, id string) {
	t.Helper()
	for p, data := range embeddedFiles(t) {
		rest, ok := strings.CutPrefix(p, "evolver/")
		if !ok {
			continue
		}
		if rest == "agent.yaml" {
			data = strings.Replace(data, "  id: evolver", "  id: "+id, 1)
		}
		writeFile(t, agents, id+"/"+rest, data)
	}
}

func removeAll(t *testing.T, dir string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
}
