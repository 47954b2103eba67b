package schedules

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin/internal/rootfs"
	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/schedule"
)

// schedule_manage lists and changes the active
// core's schedule files, <slots.schedules>/<id>.yaml. Every change is
// validated with the core's own schedule decoder before anything is
// written (a bad cron expression is refused with its reason and nothing
// changes), written atomically, and checked by reloading the core; a core
// that no longer loads gets the change undone.
//
// Approval: the registry policy is auto so that list needs no approval
// (spec: list needs neither approval nor, unless the folded policy is
// deny, a prompt); every mutation raises it to at least prompt through its
// approval facts, action "schedule.<action>", target
// "schedules/<id or (auto)>". The capability schedule.manage stays on the
// entry, so the dispatcher checks it for list too: stricter than the spec,
// and configuration folding by capability keeps working.

var scheduleActions = []string{"list", "create", "update", "enable", "disable", "delete"}

// scheduleLocks serialises schedule_manage per core directory within the
// process.
var scheduleLocks tool.Stripes

// schedulePromptPreview bounds the prompt shown in results.
const schedulePromptPreview = 120

func ScheduleManage(d Deps) effect.Definition {
	return effect.Definition{
		Name: "schedule_manage",
		Description: "List, create, update, enable, disable or delete the scheduled prompts of the active core. " +
			"A schedule runs its prompt in a fresh session at each occurrence of a cron expression, evaluated in the runtime timezone. " +
			"Changes apply from the scheduler's next poll.",
		Schema: tool.ObjectSchema(map[string]any{
			"action": map[string]any{"type": "string", "enum": scheduleActions, "default": "list"},
			"schedule_id": map[string]any{"type": "string", "maxLength": 64,
				"description": "Schedule id: a letter or digit, then letters, digits, '_' or '-'. Required except for list; optional for create (derived from the prompt)."},
			"schedule": map[string]any{"type": "string", "maxLength": 200,
				"description": "Cron expression for create and update: minute hour day-of-month month day-of-week (e.g. \"0 9 * * 1-5\"), or @hourly, @daily, @weekly, @monthly, @yearly."},
			"prompt": map[string]any{"type": "string", "maxLength": 20000, "description": "The text each run sends, for create and update."},
		}, "action"),
		Source:         effect.SourceBuiltin,
		Risk:           "high",
		Capability:     "schedule.manage",
		ApprovalPolicy: effect.ApprovalAuto,
		Adapter:        scheduleTool{deps: d}.adapter(),
	}
}

// scheduleTool is the adapter: Prepare plans a change without writing, so
// a request that would be refused is refused before the operator is
// asked; the approval names the action and target; Run applies the plan
// under the core's lock. The schedule file can change while the operator
// decides (another call, an editor), so Run first reads it again under
// the lock and plans anew only when it is no longer what the plan was
// made from.
type scheduleTool struct{ deps Deps }

// scheduleArgs are schedule_manage's arguments; a pointer tells an
// argument given empty from a missing one.
type scheduleArgs struct {
	Action     string  `json:"action"`
	ScheduleID string  `json:"schedule_id"`
	Schedule   *string `json:"schedule"`
	Prompt     *string `json:"prompt"`
}

func (a scheduleArgs) action() string {
	return cmp.Or(strings.ToLower(strings.TrimSpace(a.Action)), "list")
}

func (a scheduleArgs) id() string { return strings.TrimSpace(a.ScheduleID) }

// scheduleArgsError is schedule_manage's check of its action.
func scheduleArgsError(a scheduleArgs) string {
	if action := a.action(); !slices.Contains(scheduleActions, action) {
		return fmt.Sprintf("unsupported schedule_manage action: %s", action)
	}
	return ""
}

func (t scheduleTool) adapter() tool.Typed[scheduleArgs] {
	return tool.Typed[scheduleArgs]{Check: scheduleArgsError, Call: t.prepare}
}

// prepare plans a mutation; list needs no plan.
func (t scheduleTool) prepare(_ context.Context, inv effect.Invocation, a scheduleArgs) (effect.Call, *effect.Outcome) {
	c := &scheduleCall{st: t, inv: inv, args: a}
	if a.action() == "list" {
		return c, nil
	}
	ch, out, ok := t.plan(inv, a)
	if !ok {
		return tool.Refuse(out)
	}
	c.change = &ch
	return c, nil
}

// scheduleCall is a prepared schedule_manage call: a list, or a planned
// change.
type scheduleCall struct {
	st     scheduleTool
	inv    effect.Invocation
	args   scheduleArgs
	change *scheduleChange // nil for list
}

func (c *scheduleCall) ApprovalFacts() effect.ApprovalFacts { return scheduleFacts(c.args) }

// scheduleFacts describe a mutation for the operator from the arguments
// alone; list keeps the entry's policy.
func scheduleFacts(a scheduleArgs) effect.ApprovalFacts {
	action := a.action()
	if action == "list" {
		return effect.ApprovalFacts{Action: "schedule.list", Target: "schedules", Summary: "List schedules"}
	}
	target := "schedules/" + cmp.Or(a.id(), "(auto)")
	summary := fmt.Sprintf("%s schedule %s", action, target)
	if a.Schedule != nil {
		if cron := strings.TrimSpace(*a.Schedule); cron != "" {
			summary += fmt.Sprintf(" (%s)", cron)
		}
	}
	if a.Prompt != nil {
		if p := strings.TrimSpace(*a.Prompt); p != "" {
			summary += ": " + tool.TruncateText(p, 200)
		}
	}
	return effect.ApprovalFacts{
		Action:   "schedule." + action,
		Target:   target,
		Summary:  summary,
		RuleKey:  effect.RuleKey(fmt.Sprintf("schedule_manage:schedule.manage:%s:%s", action, target)),
		Baseline: policy.Prompt,
	}
}

// Run lists, or applies the planned change under the core's lock.
func (c *scheduleCall) Run(_ context.Context) (effect.Outcome, error) {
	t := c.st
	action := c.args.action()
	if !slices.Contains(scheduleActions, action) {
		return tool.Invalid("unsupported schedule_manage action: %s", action), nil
	}
	coreAbs, out, ok := t.coreDir(c.inv)
	if !ok {
		return out, nil
	}
	unlock := scheduleLocks.Lock(coreAbs)
	defer unlock()
	if c.change == nil {
		return t.list(coreAbs)
	}
	ch := *c.change
	if !ch.current() {
		if ch, out, ok = t.plan(c.inv, c.args); !ok {
			return out, nil
		}
	}
	return t.apply(ch)
}

func (t scheduleTool) coreDir(inv effect.Invocation) (string, effect.Outcome, bool) {
	if t.deps.CoreDir == nil {
		return "", tool.Unavailable("schedule_manage", "no core directory is configured"), false
	}
	dir := t.deps.CoreDir(inv.Turn.CoreID)
	if dir == "" {
		return "", tool.Unavailable("schedule_manage", "no core directory is configured"), false
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", tool.Invalid("invalid core directory: %s", dir), false
	}
	return abs, effect.Outcome{}, true
}

// scheduleChange is a validated change, ready to write.
type scheduleChange struct {
	action  string
	coreAbs string
	rootRel string // core-relative schedules directory
	id      string
	rel     string // core-relative path of the schedule file
	data    []byte // new content; nil for delete
	old     []byte // previous content; nil when the file is new
	oldMode fs.FileMode
	sched   core.Schedule // the schedule after the change (before it, for delete)
}

// plan validates the request against the core as it is on disk and
// returns the change. Every refusal happens before anything is written.
func (t scheduleTool) plan(inv effect.Invocation, args scheduleArgs) (scheduleChange, effect.Outcome, bool) {
	fail := func(format string, a ...any) (scheduleChange, effect.Outcome, bool) {
		return scheduleChange{}, tool.Invalid(format, a...), false
	}
	action := args.action()
	if !slices.Contains(scheduleActions, action) || action == "list" {
		return fail("unsupported schedule_manage action: %s", action)
	}
	coreAbs, out, ok := t.coreDir(inv)
	if !ok {
		return scheduleChange{}, out, false
	}
	c, err := core.Load(coreAbs)
	if err != nil {
		return fail("schedule_manage: the core does not load: %s", demiurge.ErrorMessage(err))
	}
	rootRel, err := filepath.Rel(coreAbs, c.SchedulesDir())
	if err != nil || rootRel == "." || rootfs.StartsWithDotDot(rootRel) {
		return fail("schedules directory is not inside the core: %s", c.SchedulesDir())
	}
	root, err := os.OpenRoot(coreAbs)
	if err != nil {
		return fail("schedule_manage: cannot open the core directory: %s", tool.IOReason(err))
	}
	defer root.Close()
	if link := rootfs.LinkOnPath(root, rootRel); link != "" {
		return fail("schedule target is a symlink: %s", link)
	}

	id := args.id()
	hasCron, hasPrompt := args.Schedule != nil, args.Prompt != nil
	var cron, prompt string
	if hasCron {
		cron = strings.TrimSpace(*args.Schedule)
	}
	if hasPrompt {
		prompt = strings.TrimSpace(*args.Prompt)
	}
	if hasCron {
		if err := core.CheckCron(cron); err != nil {
			return fail("%s", demiurge.ErrorMessage(err))
		}
	}
	if hasPrompt && prompt == "" && (action == "create" || action == "update") {
		return fail("prompt must not be empty")
	}

	ch := scheduleChange{action: action, coreAbs: coreAbs, rootRel: rootRel}
	var sc core.Schedule
	if action == "create" {
		if !hasCron || cron == "" {
			return fail("schedule is required for create")
		}
		if !hasPrompt {
			return fail("prompt is required for create")
		}
		if id == "" {
			id = scheduleSlug(root, rootRel, prompt)
		} else if !core.ValidScheduleID(id) {
			return fail("%s", scheduleIDError)
		}
		if _, found, _ := findScheduleFile(root, rootRel, id); found {
			return fail("schedule already exists: %s", id)
		}
		ch.rel = filepath.Join(rootRel, id+".yaml")
		if link := rootfs.LinkOnPath(root, ch.rel); link != "" {
			return fail("schedule target is a symlink: %s", link)
		}
		sc = core.Schedule{ID: id, Cron: cron, Prompt: prompt, Enabled: true,
			Slots:    core.DefaultScheduleSlots(),
			Delivery: core.ScheduleDelivery{Mode: core.ScheduleDeliveryLocal}}
	} else {
		if id == "" {
			return fail("schedule_id is required for %s", action)
		}
		if !core.ValidScheduleID(id) {
			return fail("%s", scheduleIDError)
		}
		rel, found, dup := findScheduleFile(root, rootRel, id)
		switch {
		case dup:
			return fail("duplicate schedule id: %s", id)
		case !found:
			return fail("schedule not found: %s", id)
		}
		if link := rootfs.LinkOnPath(root, rel); link != "" {
			return fail("schedule target is a symlink: %s", link)
		}
		old, err := rootfs.ReadSmall(root, rel)
		if err != nil {
			return fail("schedule not readable: %s: %s", filepath.ToSlash(rel), tool.IOReason(err))
		}
		if sc, err = c.ParseSchedule(c.DisplayPath(filepath.Join(coreAbs, rel)), id, []byte(old)); err != nil {
			return fail("%s", demiurge.ErrorMessage(err))
		}
		ch.rel, ch.old = rel, []byte(old)
		if ch.oldMode, _, err = rootfs.ExistingMode(root, rel, rootfs.FileMode); err != nil {
			return fail("schedule not readable: %s: %s", filepath.ToSlash(rel), tool.IOReason(err))
		}
		switch action {
		case "update":
			if !hasCron && !hasPrompt {
				return fail("update requires schedule or prompt")
			}
			if hasCron {
				sc.Cron = cron
			}
			if hasPrompt {
				sc.Prompt = prompt
			}
		case "enable":
			sc.Enabled = true
		case "disable":
			sc.Enabled = false
		}
	}
	if action != "delete" {
		data, err := sc.YAML()
		if err != nil {
			return fail("%s", demiurge.ErrorMessage(err))
		}
		// The core's own decoder has the last word on what is written.
		if sc, err = c.ParseSchedule(c.DisplayPath(filepath.Join(coreAbs, ch.rel)), id, data); err != nil {
			return fail("invalid schedule: %s", demiurge.ErrorMessage(err))
		}
		ch.data = data
	}
	sc.RelPath = filepath.ToSlash(ch.rel)
	ch.sched, ch.id = sc, id
	return ch, effect.Outcome{}, true
}

// current reports whether the schedule file is still what the change was
// planned from: for create, still absent; otherwise the same file with
// the same content. Run holds the core's lock while it asks.
func (ch scheduleChange) current() bool {
	root, err := os.OpenRoot(ch.coreAbs)
	if err != nil {
		return false
	}
	defer root.Close()
	if rootfs.LinkOnPath(root, ch.rel) != "" {
		return false
	}
	rel, found, dup := findScheduleFile(root, ch.rootRel, ch.id)
	if ch.old == nil {
		return !found
	}
	if !found || dup || rel != ch.rel {
		return false
	}
	data, err := rootfs.ReadSmall(root, rel)
	return err == nil && data == string(ch.old)
}

// apply writes the change, reloads the core, and undoes the change when the
// core no longer loads.
func (t scheduleTool) apply(ch scheduleChange) (effect.Outcome, error) {
	root, err := os.OpenRoot(ch.coreAbs)
	if err != nil {
		return tool.Invalid("schedule_manage: cannot open the core directory: %s", tool.IOReason(err)), nil
	}
	defer root.Close()
	if err := writeSchedule(root, ch); err != nil {
		return tool.Invalid("schedule %s failed: %s", ch.action, tool.IOReason(err)), nil
	}
	if t.deps.CoreLoader != nil {
		if lerr := t.deps.CoreLoader(ch.coreAbs); lerr != nil {
			msg := demiurge.ErrorMessage(lerr)
			if rerr := undoSchedule(root, ch); rerr != nil {
				return effect.Outcome{IsError: true, ExecutionStarted: true, Content: fmt.Sprintf(
					"schedule %s failed (core load failed: %s) and could not be rolled back: %s", ch.action, msg, tool.IOReason(rerr))}, nil
			}
			return tool.InvalidData(map[string]any{"success": false, "action": ch.action, "error": msg},
				"schedule %s rolled back because core load failed: %s", ch.action, msg), nil
		}
	}
	tz := t.timezone()
	payload := tz.Metadata(time.Now())
	payload["success"] = true
	payload["action"] = ch.action
	payload["schedule"] = schedulePayload(ch.sched, tz.Location)
	payload["effective"] = "next scheduler poll"
	content, err := tool.JSONText(payload)
	if err != nil {
		return effect.Outcome{}, err
	}
	return tool.Succeeded(content, payload), nil
}

func writeSchedule(root *os.Root, ch scheduleChange) error {
	if ch.action == "delete" {
		return root.Remove(ch.rel)
	}
	mode := ch.oldMode
	if ch.old == nil {
		mode = rootfs.FileMode
		if err := root.MkdirAll(filepath.Dir(ch.rel), rootfs.DirMode); err != nil {
			return err
		}
	}
	return rootfs.WriteAtomic(root, ch.rel, ch.data, mode)
}

// undoSchedule restores the previous content (or absence) of the file.
func undoSchedule(root *os.Root, ch scheduleChange) error {
	if ch.old == nil {
		return root.Remove(ch.rel)
	}
	return rootfs.WriteAtomic(root, ch.rel, ch.old, ch.oldMode)
}

// list reports the core's schedules with their next occurrence.
func (t scheduleTool) list(coreAbs string) (effect.Outcome, error) {
	c, err := core.Load(coreAbs)
	if err != nil {
		return tool.Invalid("schedule_manage: the core does not load: %s", demiurge.ErrorMessage(err)), nil
	}
	scheds, err := c.Schedules()
	if err != nil {
		return tool.Invalid("schedule_manage: %s", demiurge.ErrorMessage(err)), nil
	}
	tz := t.timezone()
	items := make([]any, 0, len(scheds))
	for _, sc := range scheds {
		items = append(items, schedulePayload(sc, tz.Location))
	}
	payload := tz.Metadata(time.Now())
	payload["success"] = true
	payload["count"] = len(items)
	payload["schedules"] = items
	content, err := tool.JSONText(payload)
	if err != nil {
		return effect.Outcome{}, err
	}
	return tool.Succeeded(content, payload), nil
}

func schedulePayload(sc core.Schedule, loc *time.Location) map[string]any {
	preview := sc.Prompt
	if utf8.RuneCountInString(preview) > schedulePromptPreview {
		preview = tool.FirstChars(preview, schedulePromptPreview) + "..."
	}
	m := map[string]any{
		"schedule_id": sc.ID, "enabled": sc.Enabled, "schedule": sc.Cron,
		"prompt_preview": preview, "relative_path": sc.RelPath,
	}
	if sc.Enabled {
		if next := sc.Next(time.Now(), loc); !next.IsZero() {
			m["next_run"] = demiurge.FormatTime(next)
			m["next_run_local"] = next.In(loc).Format(time.RFC3339)
		}
	}
	return m
}

// timezone is the runtime timezone: the Host's (Deps.Timezone), else
// DEMIURGE_TIMEZONE, else the host machine's zone.
func (t scheduleTool) timezone() schedule.Timezone {
	if t.deps.Timezone.Location != nil {
		return t.deps.Timezone
	}
	return scheduleTimezone()
}

// scheduleTimezone is the runtime timezone as far as the tool can tell
// without the Host: DEMIURGE_TIMEZONE, else the host's zone.
func scheduleTimezone() schedule.Timezone {
	tz, err := schedule.ResolveTimezone("", os.Getenv(schedule.TimezoneEnv), "")
	if err != nil {
		return schedule.HostTimezone()
	}
	return tz
}

const scheduleIDError = "schedule_id must start with a letter or digit and contain only letters, digits, underscores, or hyphens (at most 64)"

// findScheduleFile finds <id>.yaml or <id>.yml under rootRel; dup reports
// both.
func findScheduleFile(root *os.Root, rootRel, id string) (rel string, found, dup bool) {
	for _, ext := range []string{".yaml", ".yml"} {
		p := filepath.Join(rootRel, id+ext)
		if _, err := root.Lstat(p); err == nil {
			if found {
				return rel, true, true
			}
			rel, found = p, true
		} else if !errors.Is(err, fs.ErrNotExist) {
			return p, true, false
		}
	}
	return rel, found, false
}

var slugRun = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_-]+`) })

// scheduleSlug derives a free schedule id from the prompt: lower case,
// runs of other characters as '-', at most 48 characters, then "-2", "-3"…
// until no file has it.
func scheduleSlug(root *os.Root, rootRel, prompt string) string {
	base := strings.Trim(slugRun().ReplaceAllString(strings.ToLower(prompt), "-"), "-_")
	base = strings.Trim(tool.FirstChars(base, 48), "-_")
	if base == "" {
		base = "schedule"
	}
	if !core.ValidScheduleID(base) {
		base = "schedule-" + base
	}
	candidate := base
	for n := 2; ; n++ {
		if _, found, _ := findScheduleFile(root, rootRel, candidate); !found {
			return candidate
		}
		suffix := fmt.Sprintf("-%d", n)
		candidate = strings.Trim(tool.FirstChars(base, 64-len(suffix)), "-_") + suffix
	}
}

// Deps is what schedule_manage needs of the Host.
type Deps struct {
	// CoreDir returns the directory of a core.
	CoreDir func(coreID string) string
	// CoreLoader loads the core in dir and reports why it does not load;
	// a change after which the core no longer loads is undone.
	CoreLoader func(dir string) error
	// Timezone is the runtime timezone schedules run in (the Host's
	// resolution of --timezone, DEMIURGE_TIMEZONE and config.yaml). Zero:
	// schedule_manage resolves DEMIURGE_TIMEZONE or the host's zone itself.
	Timezone schedule.Timezone
}
