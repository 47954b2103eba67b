package corerepo

import (
	"context"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/coretree"
	"github.com/demiurge/demiurge/gitrepo"
)

// The baseline is the first revision of a repository and the reference
// every later local edit is judged against. It is made of content the Host
// trusts, never of what the agents tree happens to hold: the embedded
// templates (core.TemplateFS) of every template scope whose manifest the
// tree has (agents/agent.yaml for the global fallback, <core>/agent.yaml
// for a template core), and nothing else. Whatever the tree holds beyond
// that, or differently, is a local edit, which EnsureSaved gates before a
// turn like every other edit (a loosening needs the operator's token).

// templateScopeGlobal names the global fallback among the template scopes.
const templateScopeGlobal = "global"

// templateScope is the scope of a template path relative to the agents
// root: the core directory it lies in, or "global" for a top-level file.
func templateScope(rel string) string {
	if top, _, nested := strings.Cut(rel, "/"); nested {
		return top
	}
	return templateScopeGlobal
}

// scopeManifest is the manifest path whose presence puts a template scope
// into a baseline.
func scopeManifest(scope string) string {
	if scope == templateScopeGlobal {
		return "agent.yaml"
	}
	return scope + "/agent.yaml"
}

// templateTree returns the embedded template files of the scopes include
// accepts, as a tree with their contents, and the scopes it took (sorted).
func templateTree(include func(scope string) bool) (coretree.Tree, map[string][]byte, []string, error) {
	files, content := coretree.Tree{}, map[string][]byte{}
	taken := map[string]bool{}
	tfs := core.TemplateFS()
	err := fs.WalkDir(tfs, "agents", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := strings.TrimPrefix(name, "agents/")
		scope := templateScope(rel)
		if !include(scope) {
			return nil
		}
		data, err := fs.ReadFile(tfs, name)
		if err != nil {
			return err
		}
		files[rel] = coretree.Entry{Hash: gitrepo.BlobHash(data), Mode: coretree.Regular}
		content[rel] = data
		taken[scope] = true
		return nil
	})
	if err != nil {
		return nil, nil, nil, demiurge.WrapError(demiurge.EINTERNAL, err, "core repository: read embedded templates")
	}
	return files, content, slices.Sorted(maps.Keys(taken)), nil
}

// initialBaseline is the baseline of a new repository for the tree at
// agents: the templates of the scopes whose manifest it holds (a link or
// any other kind of file counts: it is then a local edit of that file).
func initialBaseline(agents string) (coretree.Tree, map[string][]byte, []string, error) {
	return templateTree(func(scope string) bool {
		_, err := os.Lstat(filepath.Join(agents, filepath.FromSlash(scopeManifest(scope))))
		return err == nil
	})
}

// initMessage is the message of the baseline commit.
func initMessage(reason string, scopes []string) string {
	baseline := "empty"
	if len(scopes) > 0 {
		names := make([]string, len(scopes))
		for i, s := range scopes {
			names[i] = s
			if s == templateScopeGlobal {
				names[i] = globalScope
			}
		}
		sort.Strings(names)
		baseline = "embedded templates of " + strings.Join(names, ", ")
	}
	return "core init\n\nReason: " + oneLine(reason, "initialise runtime core repository") + "\n" +
		"Baseline: " + baseline + "\n" +
		"Anything else in the agents tree is a local edit, gated before it is saved.\n"
}

// EnsureTemplateCore adds the embedded template core id (assistant or
// evolver) when the live revision lacks it: the template is installed
// into the agents tree where files are missing, and the embedded files
// (not the tree's) are committed as "add runtime core <id>", without the
// approval gate: they are the Host's own content. A file the tree already
// holds under <id>/ that differs from the template, like every other
// local edit, stays unsaved until a save gates it, so a loosened file
// left where a removed core was cannot become live this way. It reports
// whether it added the core.
func (r *Repo) EnsureTemplateCore(ctx context.Context, id string) (bool, error) {
	if id != core.TemplateAssistant && id != core.TemplateEvolver {
		return false, demiurge.Errorf(demiurge.EINVALID, "no template core %q", id)
	}
	// The usual case, a core that is there, reads without the lock, so
	// Hosts opening side by side do not collide on it.
	if live, err := r.git.Live(); err == nil {
		if files, err := r.git.Files(live); err == nil && files.HasCore(id) {
			return false, nil
		}
	}
	l, err := r.begin(ctx)
	if err != nil {
		return false, err
	}
	defer l.Unlock()
	live, err := r.git.Live()
	if err != nil {
		return false, err
	}
	files, err := r.git.Files(live)
	if err != nil {
		return false, err
	}
	if files.HasCore(id) {
		return false, nil
	}
	tmpl, content, _, err := templateTree(func(scope string) bool { return scope == id })
	if err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, demiurge.WrapError(demiurge.ECANCELED, err, "add runtime core cancelled")
	}
	if err := core.InstallTemplates(r.paths.Agents, id, false); err != nil {
		return false, err
	}
	next := maps.Clone(files)
	maps.Copy(next, tmpl)
	tree, err := r.git.StoreTree(next, content)
	if err != nil {
		return false, err
	}
	var b strings.Builder
	b.WriteString("add runtime core " + id + "\n\nSource: embedded template\nChanged scopes:\n- " + id + "\nChanged paths:\n")
	for _, c := range coretree.Diff(files, next) {
		b.WriteString("- " + c.Path + "\n")
	}
	c, err := r.git.WriteCommit(tree, []coretree.Hash{live}, b.String())
	if err != nil {
		return false, err
	}
	// The checkout is not rewritten: it already holds the template where
	// it had nothing, and keeps its own files (local edits) elsewhere.
	if err := r.switchLive(ctx, "template", live, c, false, nil); err != nil {
		return false, err
	}
	return true, nil
}
