package slash

import (
	"context"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
)

// cmdTools is the resolved catalog of the core: what a turn would see now.
func cmdTools(ctx context.Context, env Env, args string) (Outcome, error) {
	if err := noArgs("tools", args); err != nil {
		return Outcome{}, err
	}
	cat, _, err := env.Host().Catalog(ctx, env.CoreID())
	if err != nil {
		return Outcome{}, err
	}
	t := table{title: "Tools", headers: []string{"name", "source", "risk", "capability", "approval", "output"}}
	for _, e := range cat.Entries() {
		t.rows = append(t.rows, []string{e.Name, e.Source, e.Risk, orText(e.Capability, "-"), e.ApprovalPolicy, e.ModelOutputPolicy + "/" + e.DisplayPolicy})
	}
	if len(t.rows) == 0 {
		return notice("No tools are visible to core " + env.CoreID() + "."), nil
	}
	return notice(t.String()), nil
}

// cmdSkills is the core's skill index, only one category when args names
// it (exact match).
func cmdSkills(ctx context.Context, env Env, args string) (Outcome, error) {
	if strings.Contains(args, " ") {
		return Outcome{}, usageBecause("skills", "takes one category at most")
	}
	skills, err := coreSkills(ctx, env)
	if err != nil {
		return Outcome{}, err
	}
	t := table{title: "Skills", headers: []string{"name", "category", "description", "linked"}}
	for _, s := range skills {
		if args != "" && s.Category != args {
			continue
		}
		linked := 0
		for _, files := range s.LinkedFiles {
			linked += len(files)
		}
		t.rows = append(t.rows, []string{s.Name, s.Category, s.Description, strconv.Itoa(linked)})
	}
	if len(t.rows) == 0 {
		if args != "" {
			return notice("No skills in category " + args + "."), nil
		}
		return notice("Core " + env.CoreID() + " has no skills."), nil
	}
	return notice(t.String()), nil
}

// coreSkills are the skills of the UI's core at its live revision, by
// category then name (skills_list's order).
func coreSkills(ctx context.Context, env Env) ([]core.Skill, error) {
	snap, err := env.Host().LoadCore(ctx, env.CoreID())
	if err != nil {
		return nil, err
	}
	skills := slices.Clone(snap.Core.Skills)
	slices.SortStableFunc(skills, func(a, b core.Skill) int {
		if c := strings.Compare(a.Category, b.Category); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return skills, nil
}

// cmdSkill runs the core's skill_view tool (host.ViewSkill) and shows the
// skill, or its linked file: markdown as markdown, anything else as a
// code block. A tool error (an unknown skill, a file that is not linked)
// is shown as the tool said it.
func cmdSkill(ctx context.Context, env Env, args string) (Outcome, error) {
	fields := strings.Fields(args)
	if len(fields) == 0 || len(fields) > 2 {
		return Outcome{}, usage("skill")
	}
	file := ""
	if len(fields) == 2 {
		file = fields[1]
	}
	res, err := env.Host().ViewSkill(ctx, env.CoreID(), fields[0], file)
	if err != nil {
		return Outcome{}, err
	}
	if res.IsError() {
		return warning(oneLine(res.OperatorView)), nil
	}
	content, _ := res.Data["content"].(string)
	if file != "" && !strings.EqualFold(path.Ext(file), ".md") {
		return notice(fence(path.Ext(file), content)), nil
	}
	return notice(content), nil
}

// fence wraps text in a code block that no line of text can close.
func fence(ext, text string) string {
	ticks := "```"
	for strings.Contains(text, ticks) {
		ticks += "`"
	}
	return ticks + strings.TrimPrefix(ext, ".") + "\n" + strings.TrimRight(text, "\n") + "\n" + ticks
}

func cmdToolDisplay(_ context.Context, env Env, args string) (Outcome, error) {
	if args != "" {
		mode, ok := ParseToolDisplay(args)
		if !ok {
			return Outcome{}, usage("tool-display")
		}
		env.SetToolDisplay(mode)
	}
	return notice("tool display: " + string(env.ToolDisplay())), nil
}

// errNotFound reports whether err is the Host's ENOTFOUND.
func errNotFound(err error) bool { return demiurge.ErrorCode(err) == demiurge.ENOTFOUND }
