package skills

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin/internal/rootfs"
	"github.com/demiurge/demiurge/builtin/internal/textread"
	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/effect"
)

// maxLinkedFileChars bounds what skill_view returns of a linked file.
const maxLinkedFileChars = 200000

func SkillsList(d Deps) effect.Definition {
	return effect.Definition{
		Name:        "skills_list",
		Description: "List available skills with minimal metadata. Use skill_view(name) to load full content.",
		Schema: tool.ObjectSchema(map[string]any{
			"category": map[string]any{"type": "string", "description": "Only skills of this category."},
		}),
		Source:            effect.SourceBuiltin,
		Risk:              "low",
		ApprovalPolicy:    effect.ApprovalAuto,
		ModelOutputPolicy: "current_turn",
		Adapter: tool.Simple(skillsListArgs{}, nil, func(ctx context.Context, inv effect.Invocation, a skillsListArgs) (effect.Outcome, error) {
			return runSkillsList(ctx, inv, d, a)
		}),
	}
}

func SkillView(d Deps) effect.Definition {
	return effect.Definition{
		Name:        "skill_view",
		Description: "Load a skill's full content, or a linked file inside its references/, templates/, scripts/ or assets/.",
		Schema: tool.ObjectSchema(map[string]any{
			"name":      map[string]any{"type": "string", "description": "Skill id or name."},
			"file_path": map[string]any{"type": "string", "description": "A linked file of the skill, relative to the skill directory."},
		}, "name"),
		Source:            effect.SourceBuiltin,
		Risk:              "low",
		ApprovalPolicy:    effect.ApprovalAuto,
		ModelOutputPolicy: "current_turn",
		Adapter: tool.Simple(skillViewArgs{}, nil, func(ctx context.Context, inv effect.Invocation, a skillViewArgs) (effect.Outcome, error) {
			return runSkillView(ctx, inv, d, a)
		}),
	}
}

type skillsListArgs struct {
	Category string `json:"category"`
}

type skillViewArgs struct {
	Name     string `json:"name"`
	FilePath string `json:"file_path"`
}

// loadCore loads the turn's core from its directory, for its skills index.
func loadCore(inv effect.Invocation, d Deps) (*core.Core, effect.Outcome, bool) {
	if d.CoreDir == nil {
		return nil, tool.Unavailable(inv.Entry.Name, "no core directory is configured"), false
	}
	dir := d.CoreDir(inv.Turn.CoreID)
	if dir == "" {
		return nil, tool.Unavailable(inv.Entry.Name, "no core directory is configured"), false
	}
	c, err := core.Load(dir)
	if err != nil {
		return nil, tool.Invalid("skills unavailable: %s", demiurge.ErrorMessage(err)), false
	}
	return c, effect.Outcome{}, true
}

func runSkillsList(_ context.Context, inv effect.Invocation, d Deps, a skillsListArgs) (effect.Outcome, error) {
	c, out, ok := loadCore(inv, d)
	if !ok {
		return out, nil
	}
	category := strings.TrimSpace(a.Category)
	var skills []core.Skill
	categories := map[string]bool{}
	for _, s := range c.Skills {
		categories[s.Category] = true
		if category == "" || s.Category == category {
			skills = append(skills, s)
		}
	}
	sort.SliceStable(skills, func(i, j int) bool {
		if skills[i].Category != skills[j].Category {
			return skills[i].Category < skills[j].Category
		}
		return skills[i].Name < skills[j].Name
	})
	list := make([]map[string]any, 0, len(skills))
	for _, s := range skills {
		list = append(list, map[string]any{
			"name": s.Name, "skill_id": s.ID, "description": s.Description, "category": s.Category,
			"path": s.RelPath, "packaged": s.Packaged, "linked_files": linkedFiles(s),
		})
	}
	cats := make([]string, 0, len(categories))
	for k := range categories {
		cats = append(cats, k)
	}
	sort.Strings(cats)
	payload := map[string]any{
		"success": true, "skills": list, "categories": cats, "count": len(list),
		"hint": "Use skill_view(name) to load full content, or skill_view(name, file_path) for linked files.",
	}
	content, err := tool.JSONText(payload)
	if err != nil {
		return effect.Outcome{}, err
	}
	return tool.Succeeded(content, payload), nil
}

func linkedFiles(s core.Skill) map[string][]string {
	if s.LinkedFiles == nil {
		return map[string][]string{}
	}
	return s.LinkedFiles
}

func runSkillView(_ context.Context, inv effect.Invocation, d Deps, a skillViewArgs) (effect.Outcome, error) {
	name := strings.TrimSpace(a.Name)
	if name == "" {
		return tool.Invalid("name is required"), nil
	}
	c, out, ok := loadCore(inv, d)
	if !ok {
		return out, nil
	}
	s, found := c.Skill(name)
	if !found {
		names := make([]string, 0, len(c.Skills))
		for _, s := range c.Skills {
			names = append(names, s.Name)
		}
		available := strings.Join(names, ", ")
		if available == "" {
			available = "(none)"
		}
		return tool.Invalid("skill not found: %s. Available skills: %s", name, available), nil
	}
	if file := strings.TrimSpace(a.FilePath); file != "" {
		return viewLinkedFile(c, s, file)
	}
	payload := map[string]any{
		"success": true, "name": s.Name, "skill_id": s.ID, "description": s.Description,
		"category": s.Category, "content": s.Content, "path": s.RelPath, "linked_files": linkedFiles(s),
	}
	content, err := tool.JSONText(payload)
	if err != nil {
		return effect.Outcome{}, err
	}
	var model strings.Builder
	fmt.Fprintf(&model, "<skill name=%q id=%q path=%q>\n%s\n</skill>", s.Name, s.ID, s.RelPath, s.Content)
	if linked := allLinked(s); len(linked) > 0 {
		model.WriteString("\n\nLinked files available via skill_view(name, file_path):\n")
		for i, f := range linked {
			if i > 0 {
				model.WriteByte('\n')
			}
			model.WriteString("- " + f)
		}
	}
	out = tool.Succeeded(content, payload)
	out.ModelOutput = model.String()
	return out, nil
}

// allLinked lists a skill's linked files in directory order.
func allLinked(s core.Skill) []string {
	var out []string
	for _, dir := range []string{"references", "templates", "scripts", "assets"} {
		out = append(out, s.LinkedFiles[dir]...)
	}
	return out
}

// viewLinkedFile returns one linked file of a packaged skill. Only files
// the index discovered may be read, and only if they are still regular
// files (not symbolic links) when read.
func viewLinkedFile(c *core.Core, s core.Skill, file string) (effect.Outcome, error) {
	slash := filepath.ToSlash(file)
	if path.IsAbs(slash) || filepath.IsAbs(file) || hasDotDot(slash) {
		return tool.Invalid("file_path must be a relative linked skill file"), nil
	}
	norm := path.Clean(slash)
	allowed := false
	for _, f := range allLinked(s) {
		if f == norm {
			allowed = true
			break
		}
	}
	if !allowed {
		return tool.Invalid("linked skill file not found or not allowed: %s", norm), nil
	}
	skillDir := filepath.Dir(s.Path)
	root, err := os.OpenRoot(skillDir)
	if err != nil {
		return tool.Invalid("linked skill file not readable: %s", norm), nil
	}
	defer root.Close()
	rel := filepath.FromSlash(norm)
	if noLinks(root, rel) != nil {
		return tool.Invalid("linked skill file not readable: %s", norm), nil
	}
	f, err := root.Open(rel)
	if err != nil {
		return tool.Invalid("linked skill file not readable: %s", norm), nil
	}
	defer f.Close()
	var text bytes.Buffer
	rr := textread.NewReader(f, textread.BufferBytes)
	if _, err := rr.Take(maxLinkedFileChars, &text); err != nil {
		return tool.Invalid("linked skill file not readable: %s", norm), nil
	}
	if rr.Fill() {
		text.WriteString(fmt.Sprintf("\n...[truncated after %d chars]", maxLinkedFileChars))
	}
	payload := map[string]any{
		"success": true, "name": s.Name, "skill_id": s.ID, "file_path": norm,
		"content": text.String(), "path": c.RelPath(skillDir) + "/" + norm,
	}
	content, err := tool.JSONText(payload)
	if err != nil {
		return effect.Outcome{}, err
	}
	out := tool.Succeeded(content, payload)
	out.ModelOutput = fmt.Sprintf("<skill_file name=%q file_path=%q>\n%s\n</skill_file>", s.Name, norm, text.String())
	return out, nil
}

// hasDotDot reports whether the slash path p has a ".." component.
func hasDotDot(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return true
		}
	}
	return false
}

// noLinks checks that every component of rel under root exists and is not
// a symbolic link, and that the last one is a regular file.
func noLinks(root *os.Root, rel string) error {
	parts := rootfs.SplitPath(rel)
	for i := range parts {
		info, err := root.Lstat(filepath.Join(parts[:i+1]...))
		if err != nil {
			return err
		}
		if info.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("symbolic link")
		}
		if i == len(parts)-1 && !info.Mode().IsRegular() {
			return fmt.Errorf("not a regular file")
		}
	}
	return nil
}

// Deps is what the skill tools need of the Host.
type Deps struct {
	// CoreDir returns the directory of a core, SkillsDir its skills root
	// (slots.skills or <surface>/skills; it may not exist yet). The skills
	// root must lie inside the core directory.
	CoreDir   func(coreID string) string
	SkillsDir func(coreID string) string
	// CoreLoader loads the core in dir and reports why it does not load.
	// skill_manage calls it after every change and rolls the change back
	// when it fails. Without it skill_manage refuses to change anything.
	CoreLoader func(dir string) error
}
