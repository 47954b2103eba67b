package builtin_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

const deploySkill = "---\nname: deploy\ndescription: Ship the app.\n---\n# Deploy\nSteps.\n"

func skillsEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	writeFiles(t, filepath.Join(e.core, "agent", "skills"), map[string]string{
		"quick.md":                      "# Quick notes\nBody.\n",
		"deploy/SKILL.md":               deploySkill,
		"deploy/references/guide.md":    "guide text",
		"deploy/scripts/run.sh":         "echo run",
		"deploy/references/.hidden":     "hidden",
		"ops/backup/SKILL.md":           "---\ndescription: Back up.\n---\nbody\n",
		"ops/backup/assets/logo.txt":    "logo",
		"deploy/notes/not-linked.md":    "not a link dir",
		"deploy/templates/t.md":         "template",
		"deploy/templates/nested/u.txt": "nested",
	})
	symlink(t, "../SKILL.md", filepath.Join(e.core, "agent", "skills", "deploy", "references", "link.md"))
	return e
}

func TestSkillsList(t *testing.T) {
	e := skillsEnv(t)
	out := e.call("skills_list", nil)
	wantOK(t, out)
	var got struct {
		Success    bool     `json:"success"`
		Count      int      `json:"count"`
		Categories []string `json:"categories"`
		Skills     []struct {
			Name, SkillID, Description, Category, Path string
			Packaged                                   bool
			LinkedFiles                                map[string][]string `json:"linked_files"`
		} `json:"skills"`
	}
	if err := json.Unmarshal([]byte(out.Content), &got); err != nil {
		t.Fatal(err)
	}
	if !got.Success || got.Count != 3 || strings.Join(got.Categories, ",") != "general,ops" {
		t.Fatalf("list %+v", got)
	}
	var names []string
	for _, s := range got.Skills {
		names = append(names, s.Category+"/"+s.Name)
	}
	if strings.Join(names, " ") != "general/deploy general/quick ops/backup" {
		t.Fatalf("order %v, want by (category, name)", names)
	}
	d := got.Skills[0]
	if d.Description != "Ship the app." || d.Path != "agent/skills/deploy/SKILL.md" || !d.Packaged ||
		strings.Join(d.LinkedFiles["references"], ",") != "references/guide.md" ||
		strings.Join(d.LinkedFiles["templates"], ",") != "templates/nested/u.txt,templates/t.md" {
		t.Fatalf("deploy entry %+v", d)
	}
	if strings.Contains(out.Content, "Steps.") {
		t.Fatal("skills_list returned a skill body")
	}
	ops := e.call("skills_list", map[string]any{"category": "ops"})
	if !strings.Contains(ops.Content, `"count":1`) || !strings.Contains(ops.Content, `"categories":["general","ops"]`) {
		t.Fatalf("category filter %s", ops.Content)
	}
}

func TestSkillView(t *testing.T) {
	e := skillsEnv(t)
	out := e.call("skill_view", map[string]any{"name": "deploy"})
	wantOK(t, out)
	wantModel := "<skill name=\"deploy\" id=\"deploy\" path=\"agent/skills/deploy/SKILL.md\">\n" + deploySkill + "\n</skill>" +
		"\n\nLinked files available via skill_view(name, file_path):\n- references/guide.md\n- templates/nested/u.txt\n- templates/t.md\n- scripts/run.sh"
	if out.ModelOutput != wantModel {
		t.Fatalf("model output=\n%s\nwant\n%s", out.ModelOutput, wantModel)
	}
	if out.Data["content"] != deploySkill || out.Data["skill_id"] != "deploy" {
		t.Fatalf("data %v", out.Data)
	}

	file := e.call("skill_view", map[string]any{"name": "deploy", "file_path": "./references/guide.md"})
	wantOK(t, file)
	if file.ModelOutput != "<skill_file name=\"deploy\" file_path=\"references/guide.md\">\nguide text\n</skill_file>" ||
		file.Data["path"] != "agent/skills/deploy/references/guide.md" {
		t.Fatalf("linked file model=%q data=%v", file.ModelOutput, file.Data)
	}
	quick := e.call("skill_view", map[string]any{"name": "quick"})
	if !strings.HasPrefix(quick.ModelOutput, "<skill name=\"quick\" id=\"quick\" path=\"agent/skills/quick.md\">\n# Quick notes") ||
		strings.Contains(quick.ModelOutput, "Linked files") {
		t.Fatalf("quick model=%q", quick.ModelOutput)
	}

	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"name": " "}, "name is required"},
		{map[string]any{"name": "nope"}, "skill not found: nope. Available skills: backup, deploy, quick"},
		{map[string]any{"name": "deploy", "file_path": "/etc/passwd"}, "file_path must be a relative linked skill file"},
		{map[string]any{"name": "deploy", "file_path": "references/../SKILL.md"}, "file_path must be a relative linked skill file"},
		{map[string]any{"name": "deploy", "file_path": "SKILL.md"}, "linked skill file not found or not allowed: SKILL.md"},
		{map[string]any{"name": "deploy", "file_path": "references/.hidden"}, "linked skill file not found or not allowed: references/.hidden"},
		{map[string]any{"name": "deploy", "file_path": "references/link.md"}, "linked skill file not found or not allowed: references/link.md"},
		{map[string]any{"name": "deploy", "file_path": "notes/not-linked.md"}, "linked skill file not found or not allowed: notes/not-linked.md"},
	} {
		wantRefused(t, e.call("skill_view", tt.args), tt.want, "")
	}

	empty := newEnv(t)
	wantRefused(t, empty.call("skill_view", map[string]any{"name": "x"}), "skill not found: x. Available skills: (none)", "")
}
