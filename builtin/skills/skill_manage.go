package skills

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin/internal/rootfs"
	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/builtin/internal/udiff"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/effect"
)

var skillActions = []string{"create", "update", "delete", "patch", "write_file", "remove_file"}

// skillSupportDirs are the directories of a packaged skill that may hold
// support files, sorted as the error message lists them.
var skillSupportDirs = []string{"assets", "references", "scripts", "templates"}

// skillLocks serialises skill_manage per core directory within the process.
var skillLocks tool.Stripes

func SkillManage(d Deps) effect.Definition {
	return effect.Definition{
		Name: "skill_manage",
		Description: "Create, update, patch or delete skills in the active core's skills directory, or write and remove " +
			"their support files (under references/, templates/, scripts/ or assets/). Changes take effect next turn.",
		Schema: tool.ObjectSchema(map[string]any{
			"action":       map[string]any{"type": "string", "enum": skillActions},
			"name":         map[string]any{"type": "string", "description": "Skill id: one path segment, not hidden."},
			"content":      map[string]any{"type": "string", "description": "SKILL.md content, for create and update."},
			"file_path":    map[string]any{"type": "string", "description": "Support file, relative to the skill directory; for patch, write_file, remove_file."},
			"file_content": map[string]any{"type": "string", "description": "Support file content, for write_file."},
			"old_string":   map[string]any{"type": "string", "description": "Exact text to replace, for patch."},
			"new_string":   map[string]any{"type": "string", "description": "Replacement text, for patch."},
			"replace_all":  map[string]any{"type": "boolean", "default": false},
		}, "action", "name"),
		Source:         effect.SourceBuiltin,
		Risk:           "medium",
		Capability:     "fs.write",
		ApprovalPolicy: effect.ApprovalPrompt,
		Adapter: tool.Simple(skillArgs{}, skillArgsError, func(ctx context.Context, inv effect.Invocation, a skillArgs) (effect.Outcome, error) {
			return runSkillManage(ctx, inv, d, a)
		}),
	}
}

// skillArgs are skill_manage's arguments; a pointer tells an argument
// given empty from a missing one.
type skillArgs struct {
	Action      string  `json:"action"`
	Name        string  `json:"name"`
	Content     string  `json:"content"`
	FilePath    string  `json:"file_path"`
	FileContent *string `json:"file_content"`
	OldString   string  `json:"old_string"`
	NewString   *string `json:"new_string"`
	ReplaceAll  bool    `json:"replace_all"`
}

func (a skillArgs) action() string { return strings.ToLower(strings.TrimSpace(a.Action)) }
func (a skillArgs) name() string   { return strings.TrimSpace(a.Name) }

// skillArgsError is skill_manage's check of its action and name.
func skillArgsError(a skillArgs) string {
	if action := a.action(); !slices.Contains(skillActions, action) {
		return fmt.Sprintf("unsupported skill_manage action: %s", action)
	}
	name := a.name()
	if name == "" {
		return "name is required"
	}
	if !validSkillName(name) {
		return "name must be a single non-hidden relative skill id"
	}
	return ""
}

// skillTarget locates a skill inside the core; paths are core-relative.
type skillTarget struct {
	name     string
	dir      string // the skill directory (packaged) or the directory of <name>.md
	file     string // SKILL.md or <name>.md
	packaged bool
	exists   bool
}

// mutationRoot is what delete removes: a packaged skill's directory, or a
// single-file skill's file.
func (t skillTarget) mutationRoot() string {
	if t.packaged {
		return t.dir
	}
	return t.file
}

// skillChange is a validated change, ready to apply.
type skillChange struct {
	path  string // core-relative path the result names
	apply func(tx *skillTxn) (changed bool, message, diff string, err error)
}

// runSkillManage validates the request, then applies the change and
// reloads the core under the core's lock; a core that no longer loads gets
// the change rolled back exactly.
func runSkillManage(_ context.Context, inv effect.Invocation, d Deps, a skillArgs) (effect.Outcome, error) {
	if msg := skillArgsError(a); msg != "" {
		return tool.Invalid("%s", msg), nil
	}
	action, name := a.action(), a.name()
	if d.CoreLoader == nil || d.CoreDir == nil {
		return tool.Unavailable("skill_manage", "no core loader is configured"), nil
	}
	coreDir := d.CoreDir(inv.Turn.CoreID)
	if coreDir == "" {
		return tool.Unavailable("skill_manage", "no core directory is configured"), nil
	}
	coreAbs, err := filepath.Abs(coreDir)
	if err != nil {
		return tool.Invalid("invalid core directory: %s", coreDir), nil
	}
	skillsRel, out, ok := skillsRoot(d, inv.Turn.CoreID, coreAbs)
	if !ok {
		return out, nil
	}

	unlock := skillLocks.Lock(coreAbs)
	defer unlock()
	root, err := os.OpenRoot(coreAbs)
	if err != nil {
		return tool.Invalid("skill_manage: cannot open core directory: %s", tool.IOReason(err)), nil
	}
	defer root.Close()
	if link := rootfs.LinkOnPath(root, skillsRel); link != "" {
		return tool.Invalid("skill target is a symlink: %s", link), nil
	}

	t := findSkill(root, coreAbs, skillsRel, name)
	change, out, ok := planSkillChange(root, action, t, a)
	if !ok {
		return out, nil
	}
	tx := &skillTxn{root: root, backups: skillsRel}
	changed, message, diff, err := change.apply(tx)
	if err != nil {
		if rerr := tx.rollback(); rerr != nil {
			return notRolledBack(action, tool.IOReason(err), rerr), nil
		}
		return tool.Invalid("skill %s failed: %s", action, tool.IOReason(err)), nil
	}
	if err := d.CoreLoader(coreAbs); err != nil {
		msg := demiurge.ErrorMessage(err)
		if rerr := tx.rollback(); rerr != nil {
			return notRolledBack(action, "core load failed: "+msg, rerr), nil
		}
		return tool.InvalidData(
			map[string]any{"success": false, "action": action, "path": change.path, "error": msg},
			"skill %s rolled back because core load failed: %s", action, msg,
		), nil
	}
	tx.commit()
	payload := map[string]any{
		"success": true, "action": action, "path": change.path, "changed": changed,
		"effective_next_turn": true, "message": message,
	}
	if action == "patch" {
		payload["diff"] = diff
	}
	return tool.Succeeded(message, payload), nil
}

// notRolledBack reports a change that failed and could not be undone. The
// core may be left changed, so the execution started.
func notRolledBack(action, cause string, rerr error) effect.Outcome {
	return effect.Outcome{
		IsError: true, ExecutionStarted: true,
		Content: fmt.Sprintf("skill %s failed (%s) and could not be rolled back: %s; backups are kept as hidden .skill-manage-* entries in the skills directory",
			action, cause, tool.IOReason(rerr)),
	}
}

// skillsRoot returns the core-relative skills root, which must lie inside
// the core directory.
func skillsRoot(d Deps, coreID, coreAbs string) (string, effect.Outcome, bool) {
	var dir string
	if d.SkillsDir != nil {
		dir = d.SkillsDir(coreID)
	}
	if dir == "" {
		c, err := core.Load(coreAbs)
		if err != nil {
			return "", tool.Invalid("skill_manage: %s", demiurge.ErrorMessage(err)), false
		}
		dir = c.SkillsDir()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", tool.Invalid("invalid skills directory: %s", dir), false
	}
	rel, err := filepath.Rel(coreAbs, abs)
	if err != nil || rel == "." || rootfs.StartsWithDotDot(rel) {
		return "", tool.Invalid("skills directory is not inside the core: %s", dir), false
	}
	return rel, effect.Outcome{}, true
}

// validSkillName reports whether name is one relative, non-hidden path
// segment.
func validSkillName(name string) bool {
	if strings.HasPrefix(name, ".") || strings.ContainsAny(name, `/\`) || strings.IndexByte(name, 0) >= 0 {
		return false
	}
	return !filepath.IsAbs(name) && filepath.VolumeName(name) == ""
}

// findSkill locates skill name: by id in the core's index (a packaged
// skill may sit in a category directory), else <root>/<name>/SKILL.md,
// else <root>/<name>.md; otherwise a new packaged skill at
// <root>/<name>/SKILL.md.
func findSkill(root *os.Root, coreAbs, skillsRel, name string) skillTarget {
	if c, err := core.Load(coreAbs); err == nil {
		for _, s := range c.Skills {
			if s.ID != name {
				continue
			}
			if rel, err := filepath.Rel(c.Dir, s.Path); err == nil && rootfs.IsBelow(skillsRel, rel) {
				return skillTarget{name: name, dir: filepath.Dir(rel), file: rel, packaged: s.Packaged, exists: true}
			}
			break
		}
	}
	packaged := filepath.Join(skillsRel, name, "SKILL.md")
	if info, err := root.Lstat(filepath.Dir(packaged)); err == nil && info.Mode()&os.ModeSymlink != 0 {
		// A link where the skill directory would be: planSkillChange
		// refuses it by name.
		return skillTarget{name: name, dir: filepath.Dir(packaged), file: packaged, packaged: true, exists: true}
	}
	if _, err := root.Lstat(packaged); err == nil {
		return skillTarget{name: name, dir: filepath.Dir(packaged), file: packaged, packaged: true, exists: true}
	}
	single := filepath.Join(skillsRel, name+".md")
	if _, err := root.Lstat(single); err == nil {
		return skillTarget{name: name, dir: skillsRel, file: single, exists: true}
	}
	return skillTarget{name: name, dir: filepath.Dir(packaged), file: packaged, packaged: true}
}

// planSkillChange validates action on t and returns the change to apply.
// Every refusal here happens before anything is written.
func planSkillChange(root *os.Root, action string, t skillTarget, args skillArgs) (skillChange, effect.Outcome, bool) {
	fail := func(format string, a ...any) (skillChange, effect.Outcome, bool) {
		return skillChange{}, tool.Invalid(format, a...), false
	}
	if action == "create" {
		if t.exists {
			return fail("skill already exists: %s", t.name)
		}
		content := args.Content
		if content == "" {
			return fail("content is required")
		}
		if link := rootfs.LinkOnPath(root, t.file); link != "" {
			return fail("skill target is a symlink: %s", link)
		}
		return skillChange{path: slash(t.file), apply: func(tx *skillTxn) (bool, string, string, error) {
			if err := tx.mkdirAll(t.dir); err != nil {
				return false, "", "", err
			}
			return true, "skill created: " + t.name, "", tx.writeFile(t.file, []byte(content))
		}}, effect.Outcome{}, true
	}
	if !t.exists {
		return fail("skill not found: %s", t.name)
	}
	if link := rootfs.LinkOnPath(root, t.mutationRoot()); link != "" {
		return fail("skill target is a symlink: %s", link)
	}
	switch action {
	case "update":
		content := args.Content
		if content == "" {
			return fail("content is required")
		}
		return skillChange{path: slash(t.file), apply: func(tx *skillTxn) (bool, string, string, error) {
			previous, _ := rootfs.ReadSmall(root, t.file)
			return previous != content, "skill updated: " + t.name, "", tx.writeFile(t.file, []byte(content))
		}}, effect.Outcome{}, true

	case "delete":
		return skillChange{path: slash(t.mutationRoot()), apply: func(tx *skillTxn) (bool, string, string, error) {
			return true, "skill deleted: " + t.name, "", tx.remove(t.mutationRoot())
		}}, effect.Outcome{}, true

	case "patch":
		file, show := t.file, filepath.Base(t.file)
		if fp := strings.TrimSpace(args.FilePath); fp != "" {
			var out effect.Outcome
			var ok bool
			if file, show, out, ok = supportTarget(root, t, fp); !ok {
				return skillChange{}, out, false
			}
		}
		if info, err := root.Lstat(file); err != nil || !info.Mode().IsRegular() || rootfs.LinkOnPath(root, file) != "" {
			if file == t.file {
				return fail("skill file not readable: %s", t.name)
			}
			return fail("skill file not readable: %s", show)
		}
		old := args.OldString
		if old == "" {
			return fail("old_string is required")
		}
		if args.NewString == nil {
			return fail("new_string is required")
		}
		repl := *args.NewString
		text, err := rootfs.ReadSmall(root, file)
		if err != nil {
			return fail("skill file not readable: %s", show)
		}
		n := strings.Count(text, old)
		replaceAll := args.ReplaceAll
		switch {
		case n == 0:
			return fail("old_string not found in %s", show)
		case n != 1 && !replaceAll:
			return fail("old_string matched %d times in %s; set replace_all=true to replace all", n, show)
		}
		patched := strings.Replace(text, old, repl, 1)
		if replaceAll {
			patched = strings.ReplaceAll(text, old, repl)
		}
		return skillChange{path: slash(file), apply: func(tx *skillTxn) (bool, string, string, error) {
			diff := udiff.Text(show, text, patched)
			message := diff
			if message == "" {
				message = "patched " + show
			}
			return text != patched, tool.TruncateText(message, tool.OutputChars), tool.TruncateText(diff, tool.OutputChars),
				tx.writeFile(file, []byte(patched))
		}}, effect.Outcome{}, true

	case "write_file":
		file, show, out, ok := supportTarget(root, t, args.FilePath)
		if !ok {
			return skillChange{}, out, false
		}
		if args.FileContent == nil {
			return fail("file_content is required")
		}
		content := *args.FileContent
		return skillChange{path: slash(file), apply: func(tx *skillTxn) (bool, string, string, error) {
			previous, err := rootfs.ReadSmall(root, file)
			changed := err != nil || previous != content
			if err := tx.mkdirAll(filepath.Dir(file)); err != nil {
				return false, "", "", err
			}
			return changed, "skill file written: " + show, "", tx.writeFile(file, []byte(content))
		}}, effect.Outcome{}, true

	case "remove_file":
		file, show, out, ok := supportTarget(root, t, args.FilePath)
		if !ok {
			return skillChange{}, out, false
		}
		if info, err := root.Lstat(file); err != nil || !info.Mode().IsRegular() {
			return fail("skill file not found: %s", show)
		}
		return skillChange{path: slash(file), apply: func(tx *skillTxn) (bool, string, string, error) {
			if err := tx.remove(file); err != nil {
				return false, "", "", err
			}
			tx.removeEmptyDirs(filepath.Dir(file), t.dir)
			return true, "skill file removed: " + show, "", nil
		}}, effect.Outcome{}, true
	}
	return fail("unsupported skill_manage action: %s", action)
}

// supportTarget validates a support file path of a packaged skill and
// returns it core-relative, with how messages name it.
func supportTarget(root *os.Root, t skillTarget, filePath string) (file, show string, out effect.Outcome, ok bool) {
	if !t.packaged {
		return "", "", tool.Invalid("support files require a packaged skill: %s", t.name), false
	}
	raw := filepath.ToSlash(strings.TrimSpace(filePath))
	var parts []string
	for _, p := range strings.Split(raw, "/") {
		if p != "" && p != "." {
			parts = append(parts, p)
		}
	}
	bad := len(parts) < 2 || path.IsAbs(raw) || filepath.IsAbs(filePath) || strings.IndexByte(raw, 0) >= 0 ||
		len(parts) > 0 && !slices.Contains(skillSupportDirs, parts[0])
	for _, p := range parts {
		bad = bad || p == ".." || strings.HasPrefix(p, ".") || strings.Contains(p, `\`)
	}
	if bad {
		return "", "", tool.Invalid("file_path must be under one of: %s", strings.Join(skillSupportDirs, ", ")), false
	}
	show = strings.Join(parts, "/")
	file = filepath.Join(t.dir, filepath.FromSlash(show))
	if rootfs.LinkOnPath(root, file) != "" {
		return "", "", tool.Invalid("skill file not writable: %s", show), false
	}
	return file, show, effect.Outcome{}, true
}

func slash(p string) string { return filepath.ToSlash(p) }
