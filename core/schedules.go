package core

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/yamlx"
	"github.com/goccy/go-yaml"
	"github.com/robfig/cron/v3"
)

// Schedules are agent/schedules/<id>.yaml files:
//
//	enabled: true                 # default true
//	schedule: "0 9 * * 1-5"       # cron, evaluated in the runtime timezone
//	prompt: "Summarise the inbox" # the user text of each run
//	modules:                      # explicit serial slot selection
//	  input: [base_input]
//	  output: [base_output]
//	delivery:
//	  mode: local                 # or a channel name
//	  channel: null               # default: the mode
//	  target: null                # required for channels other than telegram
//	  chat_id: null               # required for telegram
//
// There is no timezone key: every schedule of a Host runs in its runtime
// timezone. A cron expression has the five standard fields (minute, hour,
// day of month, month, day of week; names such as MON and JAN allowed) or
// is one of @yearly, @annually, @monthly, @weekly, @daily, @midnight and
// @hourly. @every intervals and TZ= prefixes are refused: the first is not
// anchored to the clock, the second would override the runtime timezone.

// ScheduleDeliveryLocal is the delivery mode of a schedule whose replies stay
// in its own session.
const ScheduleDeliveryLocal = "local"

// MaxSchedules bounds the schedules of one core: every one of them costs the
// scheduler work on every poll.
const MaxSchedules = 256

// Schedule is one decoded and validated schedule file. It is plain data.
type Schedule struct {
	ID       string // the file stem
	Cron     string // the `schedule` key, trimmed
	Prompt   string // trimmed, never empty
	Enabled  bool
	Slots    ScheduleSlots // the `modules` key
	Delivery ScheduleDelivery
	File     string // absolute path of the file ("" when parsed from bytes alone)
	RelPath  string // core-relative slash path ("" when not known)

	spec cron.Schedule // parsed Cron
}

// ScheduleSlots selects the slots a scheduled run uses, in order, as one
// serial lane per phase. Both lists are non-empty, without duplicates.
type ScheduleSlots struct {
	Input  []string `yaml:"input"`
	Output []string `yaml:"output"`
}

// DefaultScheduleSlots is the selection of a schedule without a modules
// key: the base input and output slots.
func DefaultScheduleSlots() ScheduleSlots {
	return ScheduleSlots{Input: []string{"base_input"}, Output: []string{"base_output"}}
}

// of returns the ids of one phase (PhaseInput or PhaseOutput).
func (s ScheduleSlots) of(phase string) []string {
	if phase == PhaseOutput {
		return s.Output
	}
	return s.Input
}

// ScheduleDelivery says where a scheduled run's replies go.
type ScheduleDelivery struct {
	Mode    string // "local" or a channel name (normalised: lower case, '-' → '_')
	Channel string // the configured channel to use; "" means Mode
	Target  string // channel target; "" when unset
	ChatID  *int64 // telegram chat; nil when unset
}

// ChannelName returns the configured channel a non-local delivery uses.
func (d ScheduleDelivery) ChannelName() string {
	if d.Channel != "" {
		return d.Channel
	}
	return d.Mode
}

// DeliveryTarget returns the chat id (telegram) or the target.
func (d ScheduleDelivery) DeliveryTarget() string {
	if d.ChatID != nil {
		return fmt.Sprint(*d.ChatID)
	}
	return d.Target
}

// Next returns the first occurrence of the schedule strictly after after,
// evaluated in loc (nil: UTC), as a UTC time; the zero time when the
// expression matches no date within five years or the schedule was not
// made by ParseSchedule.
func (s Schedule) Next(after time.Time, loc *time.Location) time.Time {
	if s.spec == nil {
		return time.Time{}
	}
	if loc == nil {
		loc = time.UTC
	}
	next := s.spec.Next(after.In(loc))
	if next.IsZero() {
		return next
	}
	return next.UTC()
}

// IsOccurrence reports whether t is an occurrence of the schedule in loc.
// Occurrences fall on whole seconds.
func (s Schedule) IsOccurrence(t time.Time, loc *time.Location) bool {
	if t.IsZero() || t.Nanosecond() != 0 {
		return false
	}
	return s.Next(t.Add(-time.Second), loc).Equal(t)
}

// scheduleFile is the schedule YAML; its keys are exactly these.
type scheduleFile struct {
	Enabled  *bool          `yaml:"enabled"`
	Schedule string         `yaml:"schedule"`
	Prompt   string         `yaml:"prompt"`
	Modules  *ScheduleSlots `yaml:"modules"`
	Delivery *deliveryFile  `yaml:"delivery"`
}

type deliveryFile struct {
	Mode    string `yaml:"mode"`
	Channel string `yaml:"channel"`
	Target  string `yaml:"target"`
	ChatID  *int64 `yaml:"chat_id"`
}

// parseCron parses a schedule expression, or says what is wrong with it.
func parseCron(expr string) (cron.Schedule, string) {
	if expr == "" {
		return nil, "must not be empty"
	}
	upper := strings.ToUpper(expr)
	switch {
	case strings.HasPrefix(upper, "TZ=") || strings.HasPrefix(upper, "CRON_TZ="):
		return nil, "timezone prefixes are not supported: schedules run in the runtime timezone"
	case strings.HasPrefix(expr, "@every"):
		return nil, "@every is not supported: use a cron expression"
	}
	spec, err := cronParser.Parse(expr)
	if err != nil {
		return nil, err.Error() + " " + cronHint
	}
	// A date that never comes (30 February) parses but never fires.
	if spec.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return nil, "it matches no date"
	}
	return spec, ""
}

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// cronHint says what a valid expression looks like.
const cronHint = "(use 5 fields: minute hour day-of-month month day-of-week, or @hourly, @daily, @weekly, @monthly, @yearly)"

// CheckCron checks a schedule expression the way ParseSchedule does. It
// fails with EINVALID `invalid cron expression "<expr>": <reason>`.
func CheckCron(expr string) error {
	expr = strings.TrimSpace(expr)
	if _, problem := parseCron(expr); problem != "" {
		return demiurge.Errorf(demiurge.EINVALID, "invalid cron expression %s: %s", quoteShort(expr), problem)
	}
	return nil
}

// ParseSchedule decodes one schedule file strictly: data is its content, id
// its stem, and name how messages name the file. It checks what does not
// depend on the core (keys, kinds, id, cron, prompt, module lists, delivery
// shape). Errors are ECONFIG, one line, "<name>:<line>: <what>".
func ParseSchedule(name, id string, data []byte) (Schedule, error) {
	s, _, err := parseSchedule(name, id, data)
	return s, err
}

func parseSchedule(name, id string, data []byte) (Schedule, *yamlx.Document, error) {
	if !ValidScheduleID(id) {
		return Schedule{}, nil, demiurge.Errorf(demiurge.ECONFIG,
			"%s: invalid schedule id %s: start with a letter or digit, then letters, digits, '_' or '-' (at most 64)", name, quoteShort(id))
	}
	doc, err := yamlx.Parse(name, data)
	if err != nil {
		return Schedule{}, nil, err
	}
	var f scheduleFile
	if err := doc.Decode(&f); err != nil {
		return Schedule{}, nil, err
	}
	s := Schedule{ID: id, Enabled: true, Cron: strings.TrimSpace(f.Schedule), Prompt: strings.TrimSpace(f.Prompt)}
	if f.Enabled != nil {
		s.Enabled = *f.Enabled
	}
	if !doc.Has("schedule") {
		return Schedule{}, nil, doc.Errorf(0, "schedule is required (a cron expression, e.g. \"0 9 * * *\")")
	}
	spec, problem := parseCron(s.Cron)
	if problem != "" {
		return Schedule{}, nil, doc.Errorf(doc.Line("schedule"), "invalid cron expression %s: %s", quoteShort(s.Cron), problem)
	}
	s.spec = spec
	if !doc.Has("prompt") {
		return Schedule{}, nil, doc.Errorf(0, "prompt is required")
	}
	if s.Prompt == "" {
		return Schedule{}, nil, doc.Errorf(doc.Line("prompt"), "prompt must not be empty")
	}
	s.Slots = DefaultScheduleSlots()
	if f.Modules != nil {
		if f.Modules.Input != nil || doc.Has("modules", "input") {
			s.Slots.Input = f.Modules.Input
		}
		if f.Modules.Output != nil || doc.Has("modules", "output") {
			s.Slots.Output = f.Modules.Output
		}
	}
	for _, phase := range []string{PhaseInput, PhaseOutput} {
		if err := checkModuleList(doc, phase, s.Slots.of(phase)); err != nil {
			return Schedule{}, nil, err
		}
	}
	if s.Delivery, err = parseDelivery(doc, f.Delivery); err != nil {
		return Schedule{}, nil, err
	}
	return s, doc, nil
}

// checkModuleList checks one modules list: non-empty, no blank ids, no
// duplicates (ids are trimmed in place).
func checkModuleList(doc *yamlx.Document, phase string, ids []string) error {
	line := cmp.Or(doc.Line("modules", phase), doc.Line("modules"))
	if len(ids) == 0 {
		return doc.Errorf(line, "modules.%s must not be empty", phase)
	}
	seen := map[string]bool{}
	for i := range ids {
		ids[i] = strings.TrimSpace(ids[i])
		at := cmp.Or(doc.Line("modules", phase, itoa(i)), line)
		if ids[i] == "" {
			return doc.Errorf(at, "schedule module ids must not be empty (modules.%s)", phase)
		}
		if seen[ids[i]] {
			return doc.Errorf(at, "duplicate %s schedule module %s", phase, ids[i])
		}
		seen[ids[i]] = true
	}
	return nil
}

// parseDelivery normalises the delivery section and checks its shape: a
// telegram delivery needs chat_id, any other channel a target.
func parseDelivery(doc *yamlx.Document, f *deliveryFile) (ScheduleDelivery, error) {
	if f == nil {
		return ScheduleDelivery{Mode: ScheduleDeliveryLocal}, nil
	}
	d := ScheduleDelivery{
		Mode:    normalizeChannel(f.Mode),
		Channel: normalizeChannel(f.Channel),
		Target:  strings.TrimSpace(f.Target),
		ChatID:  f.ChatID,
	}
	d.Mode = cmp.Or(d.Mode, ScheduleDeliveryLocal)
	line := cmp.Or(doc.Line("delivery", "mode"), doc.Line("delivery"))
	switch {
	case d.Mode == ScheduleDeliveryLocal:
	case d.Mode == "telegram" && d.ChatID == nil:
		return d, doc.Errorf(line, "telegram schedule delivery requires chat_id")
	case d.Mode != "telegram" && d.Target == "":
		return d, doc.Errorf(line, "%s schedule delivery requires target", d.Mode)
	}
	return d, nil
}

// ParseSchedule is the package ParseSchedule plus the checks against this
// core: every module names an input or output slot of the core, and a
// channel delivery names a channel configured in agent.yaml.
func (c *Core) ParseSchedule(name, id string, data []byte) (Schedule, error) {
	s, doc, err := parseSchedule(name, id, data)
	if err != nil {
		return Schedule{}, err
	}
	return s, c.checkSchedule(doc, s)
}

func (c *Core) checkSchedule(doc *yamlx.Document, s Schedule) error {
	for _, phase := range []string{PhaseInput, PhaseOutput} {
		for i, id := range s.Slots.of(phase) {
			if _, ok := c.Slot(phase, id); ok {
				continue
			}
			known := make([]string, 0, len(c.AllSlots[phase]))
			for _, sl := range c.AllSlots[phase] {
				known = append(known, sl.ID)
			}
			have := "none"
			if len(known) > 0 {
				have = strings.Join(known, ", ")
			}
			line := cmp.Or(doc.Line("modules", phase, itoa(i)), doc.Line("modules"))
			return doc.Errorf(line, "unknown %s schedule module %s (%s slots of the core: %s)", phase, quoteShort(id), phase, have)
		}
	}
	if s.Delivery.Mode != ScheduleDeliveryLocal {
		channel := s.Delivery.ChannelName()
		ch, ok := c.Manifest.Channels[channel]
		if !ok {
			line := cmp.Or(doc.Line("delivery", "channel"), cmp.Or(doc.Line("delivery", "mode"), doc.Line("delivery")))
			return doc.Errorf(line, "%s schedule delivery requires channels.%s in agent.yaml", channel, channel)
		}
		if reason := deliveryTargetProblem(ch, s.Delivery.DeliveryTarget()); reason != "" {
			line := cmp.Or(doc.Line("delivery", "chat_id"), cmp.Or(doc.Line("delivery", "target"), doc.Line("delivery")))
			return doc.Errorf(line, "%s schedule delivery invalid: %s", channel, reason)
		}
	}
	return nil
}

// LoadSchedules reads every schedule file (<id>.yaml or <id>.yml, hidden
// files skipped) in dir, sorted by id, with the checks of ParseSchedule. A
// missing dir has no schedules. Messages name files by their path.
func LoadSchedules(dir string) ([]Schedule, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, demiurge.WrapError(demiurge.ECONFIG, err, "invalid schedules directory %q", dir)
	}
	l := &loader{dir: abs, real: abs, shown: filepath.ToSlash(abs)}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		l.real = real
	}
	return l.readSchedules(abs, nil)
}

// Schedules reads the core's schedules (SchedulesDir) afresh, with every
// check Load applies to them. Messages name files as load errors do.
func (c *Core) Schedules() ([]Schedule, error) {
	l, err := newLoader(c.Dir)
	if err != nil {
		return nil, err
	}
	return l.readSchedules(c.SchedulesDir(), c)
}

// loadSchedules is Load's check of the schedules: a schedule that does not
// parse, or names a slot or channel the core lacks, fails the load.
func (l *loader) loadSchedules(c *Core) error {
	_, err := l.readSchedules(c.SchedulesDir(), c)
	return err
}

// readSchedules discovers and parses the schedule files of root; with c
// set, each is also checked against the core.
func (l *loader) readSchedules(root string, c *Core) ([]Schedule, error) {
	ok, err := isDir(root)
	if err != nil {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "%s: schedules root is not a directory", l.show(root))
	}
	if !ok {
		return nil, nil
	}
	if problem := l.contained(root); problem != "" {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "%s: %s", l.show(root), problem)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, l.readErr(root, err)
	}
	var out []Schedule
	seen := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		ext := strings.ToLower(filepath.Ext(name))
		if strings.HasPrefix(name, ".") || (ext != ".yaml" && ext != ".yml") {
			continue
		}
		path := filepath.Join(root, name)
		if info, err := os.Stat(path); err != nil || !info.Mode().IsRegular() {
			if errors.Is(err, fs.ErrNotExist) || err == nil {
				continue // a directory, or a dangling link: not a schedule file
			}
			return nil, l.readErr(path, err)
		}
		id := strings.TrimSuffix(name, filepath.Ext(name))
		if prior, dup := seen[id]; dup {
			return nil, demiurge.Errorf(demiurge.ECONFIG, "%s: duplicate schedule id %s: %s, %s", l.show(path), id, prior, l.rel(path))
		}
		seen[id] = l.rel(path)
		if len(seen) > MaxSchedules {
			return nil, demiurge.Errorf(demiurge.ECONFIG, "%s: more than %d schedules", l.show(root), MaxSchedules)
		}
		data, err := l.read(path, yamlx.MaxBytes)
		if err != nil {
			return nil, l.readErr(path, err)
		}
		s, doc, err := parseSchedule(l.show(path), id, data)
		if err != nil {
			return nil, err
		}
		if c != nil {
			if err := c.checkSchedule(doc, s); err != nil {
				return nil, err
			}
		}
		s.File, s.RelPath = path, l.rel(path)
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// scheduleYAML fixes the key order of a rendered schedule.
type scheduleYAML struct {
	Enabled  bool          `yaml:"enabled"`
	Schedule string        `yaml:"schedule"`
	Prompt   string        `yaml:"prompt"`
	Modules  ScheduleSlots `yaml:"modules"`
	Delivery deliveryYAML  `yaml:"delivery"`
}

type deliveryYAML struct {
	Mode    string `yaml:"mode"`
	Channel string `yaml:"channel,omitempty"`
	Target  string `yaml:"target,omitempty"`
	ChatID  *int64 `yaml:"chat_id,omitempty"`
}

// YAML renders the schedule as a schedule file, every key explicit.
// ParseSchedule reads it back to an equal Schedule.
func (s Schedule) YAML() ([]byte, error) {
	out, err := yaml.Marshal(scheduleYAML{
		Enabled: s.Enabled, Schedule: s.Cron, Prompt: s.Prompt,
		Modules: ScheduleSlots{Input: nonNil(s.Slots.Input), Output: nonNil(s.Slots.Output)},
		Delivery: deliveryYAML{Mode: cmp.Or(s.Delivery.Mode, ScheduleDeliveryLocal), Channel: s.Delivery.Channel,
			Target: s.Delivery.Target, ChatID: s.Delivery.ChatID},
	})
	if err != nil {
		return nil, demiurge.WrapError(demiurge.EINTERNAL, err, "render schedule %s failed", s.ID)
	}
	return out, nil
}

func nonNil(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return slices.Clone(ids)
}

// deliveryTargetProblem checks a schedule's delivery target against the
// channel's allowlist (spec surfaces §3.16): a Telegram chat must be an
// allowed user or chat, a webhook target a key of delivery_targets, an
// email recipient in a non-empty allowed_recipients; "" when it passes.
func deliveryTargetProblem(ch Channel, target string) string {
	switch st := ch.Settings.(type) {
	case *TelegramChannel:
		id, err := strconv.ParseInt(target, 10, 64)
		if err != nil || !(slices.Contains(st.AllowedUsers, id) || slices.Contains(st.AllowedChats, id)) {
			return "telegram schedule delivery target is not allowed by core allowlist"
		}
	case *WebhookChannel:
		if _, ok := st.DeliveryTargets[target]; !ok {
			return "webhook schedule delivery target is not configured in delivery_targets"
		}
	case *SlackChannel:
		if len(st.AllowedChannels) > 0 && !slices.Contains(st.AllowedChannels, target) {
			return "slack schedule delivery target is not in allowed_channels"
		}
	case *MattermostChannel:
		if len(st.AllowedChannels) > 0 && !slices.Contains(st.AllowedChannels, target) {
			return "mattermost schedule delivery target is not in allowed_channels"
		}
	case *EmailChannel:
		if len(st.AllowedRecipients) > 0 && !slices.ContainsFunc(st.AllowedRecipients, func(r string) bool { return strings.EqualFold(r, target) }) {
			return "email schedule delivery target is not in allowed_recipients"
		}
	}
	return ""
}
