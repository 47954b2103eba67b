package slash

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/host"
)

// helpFooter is the terminal UI's help footer (spec surfaces §2.11, exact).
const helpFooter = "Enter submits. Ctrl-C interrupts a running turn."

// HelpText is /help: "# Commands", then per group "## <Group>" and one
// "- `<usage>` - <description>" line per command, then the footer.
func HelpText() string {
	var b strings.Builder
	b.WriteString("# Commands")
	group := ""
	for _, s := range specs {
		if s.Group != group {
			group = s.Group
			b.WriteString("\n\n## " + group + "\n")
		} else {
			b.WriteString("\n")
		}
		b.WriteString("- `" + s.Usage + "` - " + s.Description)
	}
	b.WriteString("\n\n" + helpFooter)
	return b.String()
}

func cmdHelp(_ context.Context, _ Env, args string) (Outcome, error) {
	if err := noArgs("help", args); err != nil {
		return Outcome{}, err
	}
	return notice(HelpText()), nil
}

// cmdStatus is the key/value table of where the UI runs (spec surfaces
// §2.11): the home and its files, the provider and where each of its
// choices comes from, the settings of this UI and their sources, the
// approvals, the session and the core's revisions, then the UI's live
// state. The provider's key never appears: api_key is where it is read
// from.
func cmdStatus(ctx context.Context, env Env, args string) (Outcome, error) {
	if err := noArgs("status", args); err != nil {
		return Outcome{}, err
	}
	h := env.Host()
	home := h.Home()
	sid := env.SessionID()
	src, err := h.StatusSources(ctx, env.CoreID(), sid, env.Provider(), env.Model())
	if err != nil {
		return Outcome{}, err
	}
	pairs := [][2]string{
		{"home", home.Dir},
		{"agents_root", home.AgentsDir()},
		{"host_config", home.ConfigPath()},
		{"fallback_config", filepath.Join(home.AgentsDir(), "agent.yaml")},
		{"workspace", env.Workspace()},
	}
	ps := src.Provider
	if p, err := h.ProviderInfo(ctx, env.CoreID(), env.Provider(), env.Model()); err != nil {
		pairs = append(pairs, [][2]string{
			{"provider", "unavailable: " + oneLine(demiurge.ErrorMessage(err))}, {"provider_source", ps.Provider},
		}...)
	} else {
		pairs = append(pairs, [][2]string{
			{"provider", p.ID}, {"provider_source", ps.Provider}, {"provider_api_mode", p.APIMode},
			{"model", p.Model}, {"model_source", ps.Model},
			{"base_url", orText(p.BaseURL, "not configured")}, {"base_url_source", ps.BaseURL},
		}...)
	}
	display := string(env.ToolDisplay())
	displaySource := src.ToolDisplay
	if display != src.ToolDisplayValue {
		displaySource = "/tool-display"
	}
	ui := h.UISettings()
	tz := h.Timezone()
	pairs = append(pairs, [][2]string{
		{"api_key", ps.APIKey},
		{"tool_display", display},
		{"tool_display_source", displaySource},
		{"runtime_timezone", tz.Name},
		{"runtime_timezone_source", tz.Source},
		{"runtime_timezone_explicit", strconv.FormatBool(tz.Explicit)},
		{"runtime_local_now", time.Now().In(location(tz.Location)).Format(time.RFC3339)},
		{"runtime_store", home.DBPath()},
		{"channel_busy_mode", ui.BusyMode},
		{"channel_busy_mode_source", src.BusyMode},
		{"user_message_align", ui.UserMessageAlign},
		{"user_message_align_source", src.UserMessageAlign},
		{"demiurge_theme_color", ui.DemiurgeThemeColor},
		{"demiurge_theme_color_source", src.DemiurgeThemeColor},
		{"user_theme_color", ui.UserThemeColor},
		{"user_theme_color_source", src.UserThemeColor},
		{"debug_show_system_prompt", strconv.FormatBool(src.ShowSystemPromptValue)},
		{"debug_show_system_prompt_source", src.ShowSystemPrompt},
		{"approval_mode", approvalMode(env)},
		{"approval_cached_allows", strconv.Itoa(src.CachedAllows)},
	}...)
	active, err := activeTasks(ctx, h, sid)
	if err != nil {
		return Outcome{}, err
	}
	pairs = append(pairs, [2]string{"background_tasks", strconv.Itoa(active)})
	messages, compacted := 0, false
	if sid != "" {
		s, err := h.Session(ctx, sid)
		if err != nil && demiurge.ErrorCode(err) != demiurge.ENOTFOUND {
			return Outcome{}, err
		}
		messages, compacted = s.MessageCount, s.CompactionSummaryID != ""
	}
	pairs = append(pairs, [][2]string{
		{"session_id", orText(sid, "(new: the next message starts it)")},
		{"session_messages", strconv.Itoa(messages)},
		{"has_compaction_summary", strconv.FormatBool(compacted)},
		{"core_id", env.CoreID()},
	}...)
	live, previous, err := h.CoreRevisions()
	if err != nil {
		return Outcome{}, err
	}
	versions, err := h.CoreVersions(10)
	if err != nil {
		return Outcome{}, err
	}
	revs := make([]string, 0, len(versions))
	for _, v := range versions {
		revs = append(revs, short(v.Revision))
	}
	revJSON, _ := json.Marshal(revs)
	status := "idle"
	if env.Busy() {
		status = "running"
	}
	pairs = append(pairs, [][2]string{
		{"active_revision", live},
		{"previous_revision", orText(previous, "(none)")},
		{"revisions", string(revJSON)},
		{"current_status", status},
		{"busy_mode", string(env.BusyMode())},
		{"queued_inputs", strconv.Itoa(len(env.Queued()))},
		{"message_count", strconv.Itoa(messages)},
	}...)
	return notice(keyValues("Status", pairs)), nil
}

// ApprovalModer is an Env that says how its approval questions are
// answered: "ask" (in the UI), "all" (each allowed once) or "deny".
type ApprovalModer interface {
	ApprovalMode() string
}

// approvalMode is env's approval mode; an Env that does not say asks.
func approvalMode(env Env) string {
	if a, ok := env.(ApprovalModer); ok {
		if m := a.ApprovalMode(); m != "" {
			return m
		}
	}
	return "ask"
}

// activeTasks counts the session's queued, running and blocked tasks.
func activeTasks(ctx context.Context, h *host.Host, sessionID string) (int, error) {
	if sessionID == "" {
		return 0, nil
	}
	tasks, err := h.SessionTasks(ctx, sessionID, demiurge.MaxTaskLimit)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range tasks {
		if demiurge.TaskActive(t.Status) {
			n++
		}
	}
	return n, nil
}

func cmdCore(_ context.Context, env Env, args string) (Outcome, error) {
	if err := noArgs("core", args); err != nil {
		return Outcome{}, err
	}
	live, _, err := env.Host().CoreRevisions()
	if err != nil {
		return Outcome{}, err
	}
	return notice(env.CoreID() + "@" + live), nil
}

// cmdVersions lists the live history, newest first: "* <rev>" for the live
// revision, two spaces before the others, with each revision's time and
// summary.
func cmdVersions(_ context.Context, env Env, args string) (Outcome, error) {
	if err := noArgs("versions", args); err != nil {
		return Outcome{}, err
	}
	vs, err := env.Host().CoreVersions(30)
	if err != nil {
		return Outcome{}, err
	}
	var b strings.Builder
	b.WriteString("```text\n")
	for _, v := range vs {
		mark := "  "
		if v.Live {
			mark = "* "
		}
		line := mark + short(v.Revision)
		if v.Previous {
			line += " (previous)"
		}
		b.WriteString(line + "  " + v.Time + "  " + oneLine(v.Summary) + "\n")
	}
	b.WriteString("```")
	return notice(b.String()), nil
}

func cmdProvider(ctx context.Context, env Env, args string) (Outcome, error) {
	if err := noArgs("provider", args); err != nil {
		return Outcome{}, err
	}
	p, err := env.Host().ProviderInfo(ctx, env.CoreID(), env.Provider(), env.Model())
	if err != nil {
		return Outcome{}, err
	}
	text := p.ID + " · " + p.Model
	if p.BaseURL != "" {
		text += " · " + p.BaseURL
	}
	return notice(text), nil
}

// cmdDoctor is the health report of the home (host.Doctor, which reads
// the home without opening another Host) as the original's table.
func cmdDoctor(ctx context.Context, env Env, args string) (Outcome, error) {
	if err := noArgs("doctor", args); err != nil {
		return Outcome{}, err
	}
	rep, err := host.Doctor(ctx, host.DoctorOptions{Home: env.Host().Home().Dir, CoreID: env.CoreID()})
	if err != nil {
		return Outcome{}, err
	}
	t := table{title: "Doctor", headers: []string{"severity", "code", "message", "remediation"}}
	for _, f := range rep.Findings {
		t.rows = append(t.rows, []string{f.Severity, f.Code, f.Message, f.Remediation})
	}
	if len(rep.Findings) == 0 {
		t.rows = append(t.rows, []string{"ok", "doctor.ok", "runtime, database, core repository and cores look consistent", ""})
	}
	summary := "\n\n" + strconv.Itoa(rep.Counts.OK) + " checks passed, " + strconv.Itoa(rep.Counts.Warning) + " warnings, " + strconv.Itoa(rep.Counts.Error) + " errors"
	out := notice(t.String() + summary)
	if !rep.OK {
		out.Level = LevelWarning
	}
	return out, nil
}

func location(l *time.Location) *time.Location {
	if l == nil {
		return time.Local
	}
	return l
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// oneLine collapses a text's whitespace, newlines included.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
