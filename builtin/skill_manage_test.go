package builtin_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/demiurge/demiurge/core"
)

// snapshot records every entry under dir: type, mode and content (files)
// or target (links). Two equal snapshots mean nothing was changed.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link " + target
		case info.IsDir():
			out[rel] = fmt.Sprintf("dir %v", info.Mode().Perm())
		default:
			b, _ := os.ReadFile(p)
			out[rel] = fmt.Sprintf("file %v %q", info.Mode().Perm(), b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameSnapshot(t *testing.T, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s: %s, was %s", k, after[k], v)
		}
	}
	for k, v := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s: new entry %s", k, v)
		}
	}
}

func (e *env) skillsDir() string { return filepath.Join(e.core, "agent", "skills") }

func (e *env) skillFile(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.skillsDir(), filepath.FromSlash(rel)))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func (e *env) loads() *core.Core {
	e.t.Helper()
	c, err := core.Load(e.core)
	if err != nil {
		e.t.Fatalf("core does not load: %v", err)
	}
	return c
}

func TestSkillManageChanges(t *testing.T) {
	e := skillsEnv(t)
	for _, tt := range []struct {
		name    string
		args    map[string]any
		message string
		path    string
		changed bool
		check   func(t *testing.T)
	}{
		{"create", map[string]any{"action": "create", "name": "notes", "content": "# Notes\n"},
			"skill created: notes", "agent/skills/notes/SKILL.md", true,
			func(t *testing.T) {
				if _, ok := e.loads().Skill("notes"); !ok || e.skillFile("notes/SKILL.md") != "# Notes\n" {
					t.Fatal("created skill not in the index")
				}
			}},
		{"update", map[string]any{"action": "update", "name": "notes", "content": "# Notes v2\n"},
			"skill updated: notes", "agent/skills/notes/SKILL.md", true,
			func(t *testing.T) {
				if e.skillFile("notes/SKILL.md") != "# Notes v2\n" {
					t.Fatal("not updated")
				}
			}},
		{"update unchanged", map[string]any{"action": "update", "name": "notes", "content": "# Notes v2\n"},
			"skill updated: notes", "agent/skills/notes/SKILL.md", false, nil},
		{"update single file", map[string]any{"action": "update", "name": "quick", "content": "# Quick v2\n"},
			"skill updated: quick", "agent/skills/quick.md", true, nil},
		{"update by id in a category", map[string]any{"action": "update", "name": "backup", "content": "# Backup v2\n"},
			"skill updated: backup", "agent/skills/ops/backup/SKILL.md", true, nil},
		{"patch", map[string]any{"action": "patch", "name": "deploy", "old_string": "Steps.", "new_string": "Steps!"},
			"--- a/SKILL.md\n+++ b/SKILL.md\n@@ -3,4 +3,4 @@\n description: Ship the app.\n ---\n # Deploy\n-Steps.\n+Steps!",
			"agent/skills/deploy/SKILL.md", true, nil},
		{"patch replace_all support file", map[string]any{"action": "patch", "name": "deploy", "file_path": "templates/t.md",
			"old_string": "t", "new_string": "T", "replace_all": true},
			"--- a/templates/t.md\n+++ b/templates/t.md\n@@ -1 +1 @@\n-template\n+TemplaTe", "agent/skills/deploy/templates/t.md", true, nil},
		{"write_file", map[string]any{"action": "write_file", "name": "deploy", "file_path": "references/deep/new.md", "file_content": "new"},
			"skill file written: references/deep/new.md", "agent/skills/deploy/references/deep/new.md", true,
			func(t *testing.T) {
				s, _ := e.loads().Skill("deploy")
				if !strings.Contains(strings.Join(s.LinkedFiles["references"], ","), "references/deep/new.md") {
					t.Fatalf("linked files %v", s.LinkedFiles)
				}
			}},
		{"write_file empty content", map[string]any{"action": "write_file", "name": "deploy", "file_path": "references/deep/new.md", "file_content": ""},
			"skill file written: references/deep/new.md", "agent/skills/deploy/references/deep/new.md", true, nil},
		{"remove_file prunes empty dirs", map[string]any{"action": "remove_file", "name": "backup", "file_path": "assets/logo.txt"},
			"skill file removed: assets/logo.txt", "agent/skills/ops/backup/assets/logo.txt", true,
			func(t *testing.T) {
				if _, err := os.Stat(filepath.Join(e.skillsDir(), "ops", "backup", "assets")); !os.IsNotExist(err) {
					t.Fatal("empty assets directory left behind")
				}
			}},
		{"delete packaged", map[string]any{"action": "delete", "name": "deploy"},
			"skill deleted: deploy", "agent/skills/deploy", true,
			func(t *testing.T) {
				if _, err := os.Stat(filepath.Join(e.skillsDir(), "deploy")); !os.IsNotExist(err) {
					t.Fatal("skill directory still there")
				}
			}},
		{"delete single file", map[string]any{"action": "delete", "name": "quick"},
			"skill deleted: quick", "agent/skills/quick.md", true, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := e.call("skill_manage", tt.args)
			wantOK(t, out)
			if out.Content != tt.message {
				t.Fatalf("content=%q, want %q", out.Content, tt.message)
			}
			d := out.Data
			if d["success"] != true || d["action"] != tt.args["action"] || d["path"] != tt.path || d["changed"] != tt.changed ||
				d["effective_next_turn"] != true || d["message"] != tt.message {
				t.Fatalf("data=%v", d)
			}
			if tt.check != nil {
				tt.check(t)
			}
			e.loads()
			if hidden := hiddenEntries(t, e.skillsDir()); len(hidden) > 0 {
				t.Fatalf("backups left behind: %v", hidden)
			}
		})
	}
}

func hiddenEntries(t *testing.T, dir string) []string {
	var out []string
	for k := range snapshot(t, dir) {
		if strings.HasPrefix(filepath.Base(k), ".skill-manage-") || strings.HasSuffix(k, ".tmp") {
			out = append(out, k)
		}
	}
	return out
}

func TestSkillManageRefusals(t *testing.T) {
	e := skillsEnv(t)
	symlink(t, filepath.Join(e.skillsDir(), "deploy"), filepath.Join(e.skillsDir(), "linked"))
	before := snapshot(t, e.core)
	under := "file_path must be under one of: assets, references, scripts, templates"
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"action": "rename", "name": "deploy"}, "unsupported skill_manage action: rename"},
		{map[string]any{"action": "create", "name": "  "}, "name is required"},
		{map[string]any{"action": "create", "name": "../x", "content": "x"}, "name must be a single non-hidden relative skill id"},
		{map[string]any{"action": "create", "name": "a/b", "content": "x"}, "name must be a single non-hidden relative skill id"},
		{map[string]any{"action": "create", "name": ".hidden", "content": "x"}, "name must be a single non-hidden relative skill id"},
		{map[string]any{"action": "create", "name": "/abs", "content": "x"}, "name must be a single non-hidden relative skill id"},
		{map[string]any{"action": "create", "name": "deploy", "content": "x"}, "skill already exists: deploy"},
		{map[string]any{"action": "create", "name": "quick", "content": "x"}, "skill already exists: quick"},
		{map[string]any{"action": "create", "name": "fresh"}, "content is required"},
		{map[string]any{"action": "create", "name": "fresh", "content": ""}, "content is required"},
		{map[string]any{"action": "update", "name": "nope", "content": "x"}, "skill not found: nope"},
		{map[string]any{"action": "delete", "name": "nope"}, "skill not found: nope"},
		{map[string]any{"action": "update", "name": "deploy"}, "content is required"},
		{map[string]any{"action": "delete", "name": "linked"}, "skill target is a symlink: agent/skills/linked"},
		{map[string]any{"action": "patch", "name": "deploy", "new_string": "x"}, "old_string is required"},
		{map[string]any{"action": "patch", "name": "deploy", "old_string": "Steps."}, "new_string is required"},
		{map[string]any{"action": "patch", "name": "deploy", "old_string": "zzz", "new_string": "x"}, "old_string not found in SKILL.md"},
		{map[string]any{"action": "patch", "name": "deploy", "old_string": "e", "new_string": "x"}, "old_string matched 6 times in SKILL.md; set replace_all=true to replace all"},
		{map[string]any{"action": "patch", "name": "deploy", "file_path": "references/none.md", "old_string": "a", "new_string": "b"}, "skill file not readable: references/none.md"},
		{map[string]any{"action": "patch", "name": "quick", "file_path": "references/x.md", "old_string": "a", "new_string": "b"}, "support files require a packaged skill: quick"},
		{map[string]any{"action": "write_file", "name": "quick", "file_path": "references/x.md", "file_content": "x"}, "support files require a packaged skill: quick"},
		{map[string]any{"action": "write_file", "name": "deploy", "file_path": "notes/x.md", "file_content": "x"}, under},
		{map[string]any{"action": "write_file", "name": "deploy", "file_path": "references", "file_content": "x"}, under},
		{map[string]any{"action": "write_file", "name": "deploy", "file_path": "references/../../x.md", "file_content": "x"}, under},
		{map[string]any{"action": "write_file", "name": "deploy", "file_path": "/references/x.md", "file_content": "x"}, under},
		{map[string]any{"action": "write_file", "name": "deploy", "file_path": "references/.x.md", "file_content": "x"}, under},
		{map[string]any{"action": "write_file", "name": "deploy", "file_path": "", "file_content": "x"}, under},
		{map[string]any{"action": "write_file", "name": "deploy", "file_path": "references/x.md"}, "file_content is required"},
		{map[string]any{"action": "write_file", "name": "deploy", "file_path": "references/link.md", "file_content": "x"}, "skill file not writable: references/link.md"},
		{map[string]any{"action": "remove_file", "name": "deploy", "file_path": "references/none.md"}, "skill file not found: references/none.md"},
	} {
		t.Run(fmt.Sprint(tt.args["action"], " ", tt.args["name"], " ", tt.args["file_path"]), func(t *testing.T) {
			wantRefused(t, e.call("skill_manage", tt.args), tt.want, "")
		})
	}
	sameSnapshot(t, before, snapshot(t, e.core))

	noLoader := skillsEnv(t)
	noLoader.deps.CoreLoader = nil
	wantRefused(t, noLoader.call("skill_manage", map[string]any{"action": "create", "name": "x", "content": "x"}),
		"skill_manage is not available: no core loader is configured", "")
	outside := skillsEnv(t)
	outside.deps.SkillsDir = func(string) string { return t.TempDir() }
	if out := outside.call("skill_manage", map[string]any{"action": "create", "name": "x", "content": "x"}); !strings.HasPrefix(out.Content, "skills directory is not inside the core: ") {
		t.Fatalf("skills dir outside the core: %q", out.Content)
	}
}

// TestSkillManageRollback: when the core no longer loads after a change,
// the change is undone exactly and the load error is returned.
func TestSkillManageRollback(t *testing.T) {
	badFrontmatter := "---\nname: [unclosed\n---\nbody\n"
	failing := errors.New("simulated load failure")
	for _, tt := range []struct {
		name       string
		args       map[string]any
		failLoader bool // the loader fails whatever the change
		wantPrefix string
	}{
		{"create with bad frontmatter", map[string]any{"action": "create", "name": "broken", "content": badFrontmatter}, false,
			"skill create rolled back because core load failed: agents/demo/agent/skills/broken/SKILL.md"},
		{"create duplicate name", map[string]any{"action": "create", "name": "deploy2", "content": "---\nname: deploy\n---\nx\n"}, false,
			"skill create rolled back because core load failed: "},
		{"update with bad frontmatter", map[string]any{"action": "update", "name": "deploy", "content": badFrontmatter}, false,
			"skill update rolled back because core load failed: "},
		{"update single file", map[string]any{"action": "update", "name": "quick", "content": badFrontmatter}, false,
			"skill update rolled back because core load failed: "},
		{"patch", map[string]any{"action": "patch", "name": "deploy", "old_string": "name: deploy", "new_string": "name: [x"}, false,
			"skill patch rolled back because core load failed: "},
		{"delete", map[string]any{"action": "delete", "name": "deploy"}, true,
			"skill delete rolled back because core load failed: internal error"},
		{"write_file new", map[string]any{"action": "write_file", "name": "deploy", "file_path": "assets/a/b/new.bin", "file_content": "x"}, true,
			"skill write_file rolled back because core load failed: "},
		{"write_file existing", map[string]any{"action": "write_file", "name": "deploy", "file_path": "references/guide.md", "file_content": "x"}, true,
			"skill write_file rolled back because core load failed: "},
		{"remove_file", map[string]any{"action": "remove_file", "name": "backup", "file_path": "assets/logo.txt"}, true,
			"skill remove_file rolled back because core load failed: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := skillsEnv(t)
			if err := os.Chmod(filepath.Join(e.skillsDir(), "deploy", "references", "guide.md"), 0o600); err != nil {
				t.Fatal(err)
			}
			guideInfo, _ := os.Stat(filepath.Join(e.skillsDir(), "deploy", "references", "guide.md"))
			if tt.failLoader {
				e.deps.CoreLoader = func(string) error { return failing }
			}
			before := snapshot(t, e.core)
			out := e.call("skill_manage", tt.args)
			if !out.IsError || out.ExecutionStarted || !strings.HasPrefix(out.Content, tt.wantPrefix) {
				t.Fatalf("outcome is_error=%v started=%v %q, want prefix %q", out.IsError, out.ExecutionStarted, out.Content, tt.wantPrefix)
			}
			if out.Data["success"] != false || out.Data["action"] != tt.args["action"] || out.Data["error"] == "" {
				t.Fatalf("data=%v", out.Data)
			}
			sameSnapshot(t, before, snapshot(t, e.core))
			// A replaced file comes back as the same file, not a copy.
			if after, err := os.Stat(filepath.Join(e.skillsDir(), "deploy", "references", "guide.md")); err != nil || !os.SameFile(guideInfo, after) {
				t.Fatalf("guide.md is not the original file after rollback: %v", err)
			}
			e.loads()
		})
	}
}

// TestSkillManageSerialised: concurrent changes of one core never
// overlap: each change and its core reload run alone.
func TestSkillManageSerialised(t *testing.T) {
	e := skillsEnv(t)
	var inFlight, maxInFlight atomic.Int32
	e.deps.CoreLoader = func(dir string) error {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(2 * time.Millisecond)
		_, err := core.Load(dir)
		return err
	}
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			out, err := e.callErr("skill_manage", map[string]any{"action": "create", "name": fmt.Sprintf("s%d", i), "content": "x\n"})
			if err != nil || out.IsError {
				errs <- fmt.Sprintf("s%d: %v %q", i, err, out.Content)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	if got := maxInFlight.Load(); got != 1 {
		t.Fatalf("%d core loads overlapped, want 1 at a time", got)
	}
	if got := len(e.loads().Skills); got != 3+n {
		t.Fatalf("%d skills, want %d", got, 3+n)
	}
}
