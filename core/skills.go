package core

import (
	"cmp"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/yamlx"
)

// skillLinkDirs are the directories of a packaged skill whose files the
// skill may link to.
var skillLinkDirs = []string{"references", "templates", "scripts", "assets"}

// frontmatter is the part of a skill's YAML frontmatter the index reads;
// other keys are allowed (skills come from many authors) but ignored.
type frontmatter struct {
	Name, Description, Category string
}

// loadSkills builds the skills index: <root>/<name>.md files and
// <root>/**/<id>/SKILL.md directories, sorted by id. Hidden paths and
// symbolic links are skipped. Two skills sharing an id or a name are an error.
func (l *loader) loadSkills(doc *yamlx.Document, c *Core) error {
	configured := c.Manifest.Slots.Skills
	root := filepath.Join(c.SurfaceRoot, "skills")
	if configured != "" {
		var problem string
		if root, problem = l.resolve(configured); problem != "" {
			return doc.Errorf(doc.Line("slots", "skills"), "invalid slots.skills %q: %s", configured, problem)
		}
	}
	if ok, err := isDir(root); err != nil {
		return demiurge.Errorf(demiurge.ECONFIG, "%s: skill root is not a directory", l.show(root))
	} else if !ok {
		return nil
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return l.readErr(root, err)
	}
	var skills []Skill
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !e.Type().IsRegular() || !strings.EqualFold(filepath.Ext(name), ".md") {
			continue
		}
		s, err := l.loadSkill(filepath.Join(root, name), strings.TrimSuffix(name, filepath.Ext(name)), "general", false)
		if err != nil {
			return err
		}
		skills = append(skills, s)
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return l.readErr(p, err)
		}
		if p == root {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || d.Name() != "SKILL.md" || !d.Type().IsRegular() || filepath.Dir(p) == root {
			return nil
		}
		dir := filepath.Dir(p)
		category := "general"
		if parent := filepath.ToSlash(filepath.Dir(mustRel(root, dir))); parent != "." {
			category = parent
		}
		s, err := l.loadSkill(p, filepath.Base(dir), category, true)
		if err != nil {
			return err
		}
		if s.LinkedFiles, err = l.linkedFiles(dir); err != nil {
			return err
		}
		skills = append(skills, s)
		return nil
	})
	if err != nil {
		return err
	}
	sort.SliceStable(skills, func(i, j int) bool { return skills[i].ID < skills[j].ID })
	seen := map[string]string{}
	for _, s := range skills {
		for _, key := range uniq(s.ID, s.Name) {
			if prior, dup := seen[key]; dup {
				return demiurge.Errorf(demiurge.ECONFIG, "%s: duplicate skill id %s: %s, %s", l.show(s.Path), key, prior, s.RelPath)
			}
			seen[key] = s.RelPath
		}
	}
	c.Skills = skills
	return nil
}

// loadSkill reads one skill file and its frontmatter.
func (l *loader) loadSkill(abs, id, category string, packaged bool) (Skill, error) {
	data, err := l.read(abs, maxTextBytes)
	if err != nil {
		return Skill{}, l.readErr(abs, err)
	}
	content := string(data)
	fm, body, found := splitFrontmatter(content)
	var meta frontmatter
	if found {
		doc, err := yamlx.Parse(l.show(abs), []byte(fm))
		if err != nil {
			return Skill{}, err
		}
		var raw map[string]any
		if err := doc.Decode(&raw); err != nil {
			return Skill{}, err
		}
		fields := map[string]*string{"name": &meta.Name, "description": &meta.Description, "category": &meta.Category}
		for _, key := range slices.Sorted(maps.Keys(fields)) {
			v, ok := raw[key]
			if !ok || v == nil {
				continue
			}
			text, ok := v.(string)
			if !ok {
				return Skill{}, doc.Errorf(doc.Line(key), "invalid skill frontmatter %s: expected a string", key)
			}
			*fields[key] = text
		}
	}
	s := Skill{
		ID:       id,
		Name:     cmp.Or(strings.TrimSpace(meta.Name), id),
		Category: cmp.Or(strings.TrimSpace(meta.Category), category),
		Path:     abs,
		RelPath:  l.rel(abs),
		Content:  content,
		Packaged: packaged,
	}
	s.Description = strings.TrimSpace(meta.Description)
	if s.Description == "" {
		s.Description = firstBodyLine(body)
	}
	return s, nil
}

// splitFrontmatter splits "---\n<yaml>\n---\n<body>". The returned YAML
// keeps its leading newline so that its line numbers are the file's.
func splitFrontmatter(content string) (yaml, body string, found bool) {
	first, rest, ok := strings.Cut(content, "\n")
	if !ok || strings.TrimRight(first, " \t\r") != "---" {
		return "", content, false
	}
	offset := len(first) + 1
	for len(rest) > 0 {
		ln, next, _ := strings.Cut(rest, "\n")
		if t := strings.TrimRight(ln, " \t\r"); t == "---" || t == "..." {
			return "\n" + content[len(first)+1:offset], next, true
		}
		offset += len(ln) + 1
		rest = next
	}
	return "", content, false
}

// firstBodyLine is the fallback description: the first non-blank line of
// the body, without heading marks.
func firstBodyLine(body string) string {
	for _, ln := range strings.Split(body, "\n") {
		t := strings.TrimSpace(ln)
		if t == "" || t == "---" || t == "..." {
			continue
		}
		return strings.TrimSpace(strings.TrimLeft(t, "#"))
	}
	return ""
}

// linkedFiles lists the regular, non-hidden files under the link
// directories of a packaged skill, relative to the skill directory.
func (l *loader) linkedFiles(skillDir string) (map[string][]string, error) {
	var linked map[string][]string
	for _, name := range skillLinkDirs {
		dir := filepath.Join(skillDir, name)
		if info, err := os.Lstat(dir); err != nil || !info.IsDir() {
			continue
		}
		var files []string
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return l.readErr(p, err)
			}
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() {
				files = append(files, path.Clean(filepath.ToSlash(mustRel(skillDir, p))))
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if len(files) > 0 {
			sort.Strings(files)
			if linked == nil {
				linked = map[string][]string{}
			}
			linked[name] = files
		}
	}
	return linked, nil
}

func mustRel(base, p string) string {
	r, err := filepath.Rel(base, p)
	if err != nil {
		return p
	}
	return r
}

func uniq(a, b string) []string {
	if a == b {
		return []string{a}
	}
	return []string{a, b}
}
