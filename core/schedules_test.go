package core_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
)

const dailyYAML = "schedule: \"0 9 * * *\"\nprompt: Summarise the inbox\n"

func TestLoadSchedules(t *testing.T) {
	dir := writeCore(t, map[string]*string{
		"agent/schedules/daily.yaml": s(dailyYAML),
		"agent/schedules/weekly.yml": s(`enabled: false
schedule: "@weekly"
prompt: "  Weekly review  "
modules:
  input: [base_input]
  output: [base_output]
delivery:
  mode: local
`),
		"agent/schedules/.daily.yaml.0123.tmp": s("not: [a schedule"),
		"agent/schedules/notes.txt":            s("ignored"),
	})
	c, err := core.Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	got, err := c.Schedules()
	if err != nil {
		t.Fatalf("Schedules: %v", err)
	}
	if len(got) != 2 {
		t.Fatalf("got %d schedules, want 2: %+v", len(got), got)
	}
	d, w := got[0], got[1]
	if d.ID != "daily" || d.Cron != "0 9 * * *" || d.Prompt != "Summarise the inbox" || !d.Enabled {
		t.Errorf("daily = %+v", d)
	}
	if want := (core.ScheduleSlots{Input: []string{"base_input"}, Output: []string{"base_output"}}); !reflect.DeepEqual(d.Slots, want) {
		t.Errorf("daily slots = %+v, want the defaults %+v", d.Slots, want)
	}
	if d.Delivery.Mode != core.ScheduleDeliveryLocal {
		t.Errorf("daily delivery = %+v, want local", d.Delivery)
	}
	if d.RelPath != "agent/schedules/daily.yaml" || d.File != filepath.Join(dir, "agent", "schedules", "daily.yaml") {
		t.Errorf("daily paths = %q, %q", d.RelPath, d.File)
	}
	if w.ID != "weekly" || w.Enabled || w.Prompt != "Weekly review" {
		t.Errorf("weekly = %+v", w)
	}
	loose, err := core.LoadSchedules(filepath.Join(dir, "agent", "schedules"))
	if err != nil || len(loose) != 2 {
		t.Fatalf("LoadSchedules = %d schedules, %v", len(loose), err)
	}
}

func TestScheduleLoadErrors(t *testing.T) {
	const file = "agents/demo/agent/schedules/daily.yaml"
	for _, tt := range []struct {
		name  string
		files map[string]*string
		want  string
	}{
		{"bad cron", map[string]*string{"agent/schedules/daily.yaml": s("prompt: hi\nschedule: \"61 * * * *\"\n")},
			file + `:2: invalid cron expression "61 * * * *": end of range (61) above maximum (59): 61 (use 5 fields: minute hour day-of-month month day-of-week, or @hourly, @daily, @weekly, @monthly, @yearly)`},
		{"too few fields", map[string]*string{"agent/schedules/daily.yaml": s("schedule: \"0 9 *\"\nprompt: hi\n")},
			file + `:1: invalid cron expression "0 9 *": expected exactly 5 fields, found 3: [0 9 *] (use 5 fields: minute hour day-of-month month day-of-week, or @hourly, @daily, @weekly, @monthly, @yearly)`},
		{"every", map[string]*string{"agent/schedules/daily.yaml": s("schedule: \"@every 5m\"\nprompt: hi\n")},
			file + `:1: invalid cron expression "@every 5m": @every is not supported: use a cron expression`},
		{"timezone prefix", map[string]*string{"agent/schedules/daily.yaml": s("schedule: \"CRON_TZ=Asia/Tokyo 0 9 * * *\"\nprompt: hi\n")},
			file + `:1: invalid cron expression "CRON_TZ=Asia/Tokyo 0 9 * * *": timezone prefixes are not supported: schedules run in the runtime timezone`},
		{"never fires", map[string]*string{"agent/schedules/daily.yaml": s("schedule: \"0 0 30 2 *\"\nprompt: hi\n")},
			file + `:1: invalid cron expression "0 0 30 2 *": it matches no date`},
		{"empty cron", map[string]*string{"agent/schedules/daily.yaml": s("schedule: \" \"\nprompt: hi\n")},
			file + `:1: invalid cron expression "": must not be empty`},
		{"missing cron", map[string]*string{"agent/schedules/daily.yaml": s("prompt: hi\n")},
			file + `: schedule is required (a cron expression, e.g. "0 9 * * *")`},
		{"timezone key", map[string]*string{"agent/schedules/daily.yaml": s(dailyYAML + "timezone: UTC\n")},
			file + `:3: unknown key "timezone" (expected one of: enabled, schedule, prompt, modules, delivery)`},
		{"enabled string", map[string]*string{"agent/schedules/daily.yaml": s(dailyYAML + "enabled: \"yes\"\n")},
			file + `:3: invalid value for enabled: expected a boolean (true or false), got a string`},
		{"empty prompt", map[string]*string{"agent/schedules/daily.yaml": s("schedule: \"@daily\"\nprompt: \"  \"\n")},
			file + `:2: prompt must not be empty`},
		{"missing prompt", map[string]*string{"agent/schedules/daily.yaml": s("schedule: \"@daily\"\n")},
			file + `: prompt is required`},
		{"empty module list", map[string]*string{"agent/schedules/daily.yaml": s(dailyYAML + "modules:\n  input: []\n")},
			file + `:4: modules.input must not be empty`},
		{"duplicate module", map[string]*string{"agent/schedules/daily.yaml": s(dailyYAML + "modules:\n  output:\n    - base_output\n    - base_output\n")},
			file + `:6: duplicate output schedule module base_output`},
		{"unknown module", map[string]*string{"agent/schedules/daily.yaml": s(dailyYAML + "modules:\n  input:\n    - base_input\n    - recall\n")},
			file + `:6: unknown input schedule module "recall" (input slots of the core: base_input)`},
		{"telegram without chat", map[string]*string{"agent/schedules/daily.yaml": s(dailyYAML + "delivery:\n  mode: telegram\n")},
			file + `:4: telegram schedule delivery requires chat_id`},
		{"webhook without target", map[string]*string{"agent/schedules/daily.yaml": s(dailyYAML + "delivery:\n  mode: webhook\n")},
			file + `:4: webhook schedule delivery requires target`},
		{"channel not configured", map[string]*string{"agent/schedules/daily.yaml": s(dailyYAML + "delivery:\n  mode: telegram\n  chat_id: -1001\n")},
			file + `:4: telegram schedule delivery requires channels.telegram in agent.yaml`},
		{"bad id", map[string]*string{"agent/schedules/_daily.yaml": s(dailyYAML)},
			`agents/demo/agent/schedules/_daily.yaml: invalid schedule id "_daily": start with a letter or digit, then letters, digits, '_' or '-' (at most 64)`},
		{"duplicate id", map[string]*string{"agent/schedules/daily.yaml": s(dailyYAML), "agent/schedules/daily.yml": s(dailyYAML)},
			`agents/demo/agent/schedules/daily.yml: duplicate schedule id daily: agent/schedules/daily.yaml, agent/schedules/daily.yml`},
		{"root is a file", map[string]*string{"agent/schedules": s("x")},
			`agents/demo/agent/schedules: schedules root is not a directory`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeCore(t, tt.files)
			_, err := core.Load(dir)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", got, tt.want)
			}
			if code := demiurge.ErrorCode(err); code != demiurge.ECONFIG {
				t.Errorf("code = %s, want %s", code, demiurge.ECONFIG)
			}
		})
	}
}

func TestScheduleChannelDelivery(t *testing.T) {
	agent := *baseCore()["agent.yaml"] + "channels:\n  telegram:\n    enabled: false\n    allowed_chats: [-1001]\n  ops-hook:\n    type: webhook\n    delivery_targets: {reports: \"https://example.com/r\"}\n"
	dir := writeCore(t, map[string]*string{
		"agent.yaml":                 s(agent),
		"agent/schedules/tg.yaml":    s(dailyYAML + "delivery:\n  mode: Telegram\n  chat_id: -1001\n"),
		"agent/schedules/hook.yaml":  s(dailyYAML + "delivery:\n  mode: webhook\n  channel: ops-hook\n  target: \" reports \"\n"),
		"agent/schedules/local.yaml": s(dailyYAML + "delivery: {mode: local, target: ignored}\n"),
	})
	c, err := core.Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	got, err := c.Schedules()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]core.Schedule{}
	for _, sc := range got {
		byID[sc.ID] = sc
	}
	if d := byID["tg"].Delivery; d.Mode != "telegram" || d.ChannelName() != "telegram" || d.DeliveryTarget() != "-1001" {
		t.Errorf("tg delivery = %+v", d)
	}
	if d := byID["hook"].Delivery; d.ChannelName() != "ops_hook" || d.DeliveryTarget() != "reports" {
		t.Errorf("hook delivery = %+v (channel %q)", d, d.ChannelName())
	}
	if d := byID["local"].Delivery; d.Mode != "local" {
		t.Errorf("local delivery = %+v", d)
	}
}

// A schedule's channel target must pass the channel's allowlist.
func TestScheduleDeliveryTargetAllowlist(t *testing.T) {
	agent := *baseCore()["agent.yaml"] + "channels:\n  telegram:\n    allowed_users: [42]\n  webhook:\n    delivery_targets: {ops: \"https://example.com/o\"}\n"
	for _, tt := range []struct{ schedule, want string }{
		{dailyYAML + "delivery:\n  mode: telegram\n  chat_id: 7\n", "telegram schedule delivery invalid: telegram schedule delivery target is not allowed by core allowlist"},
		{dailyYAML + "delivery:\n  mode: webhook\n  target: nowhere\n", "webhook schedule delivery invalid: webhook schedule delivery target is not configured in delivery_targets"},
	} {
		dir := writeCore(t, map[string]*string{"agent.yaml": s(agent), "agent/schedules/x.yaml": s(tt.schedule)})
		c, err := core.Load(dir)
		if err == nil {
			_, err = c.Schedules()
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err = %v, want %q", err, tt.want)
		}
	}
	dir := writeCore(t, map[string]*string{"agent.yaml": s(agent), "agent/schedules/x.yaml": s(dailyYAML + "delivery:\n  mode: telegram\n  chat_id: 42\n")})
	if c, err := core.Load(dir); err != nil {
		t.Fatal(err)
	} else if _, err := c.Schedules(); err != nil {
		t.Fatal(err)
	}
}

// A schedule added after Load is seen by Schedules and checked like Load
// checks it.
func TestSchedulesReadAfresh(t *testing.T) {
	dir := writeCore(t, nil)
	c, err := core.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.Schedules(); err != nil || len(got) != 0 {
		t.Fatalf("Schedules = %v, %v; want none", got, err)
	}
	p := filepath.Join(dir, "agent", "schedules", "late.yaml")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("schedule: \"0 25 * * *\"\nprompt: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = c.Schedules()
	if err == nil || !strings.HasPrefix(err.Error(), "agents/demo/agent/schedules/late.yaml:1: invalid cron expression") {
		t.Fatalf("Schedules error = %v", err)
	}
}

func TestParseScheduleAgainstCore(t *testing.T) {
	c, err := core.Load(writeCore(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ParseSchedule("new.yaml", "new", []byte(dailyYAML+"modules:\n  output: [archive]\n")); err == nil ||
		err.Error() != `new.yaml:4: unknown output schedule module "archive" (output slots of the core: base_output)` {
		t.Errorf("error = %v", err)
	}
	// The package-level parser does not know the core's slots.
	if _, err := core.ParseSchedule("new.yaml", "new", []byte(dailyYAML+"modules:\n  output: [archive]\n")); err != nil {
		t.Errorf("ParseSchedule: %v", err)
	}
}

func TestScheduleNextInTimezone(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skipf("no tzdata: %v", err)
	}
	sc, err := core.ParseSchedule("x.yaml", "x", []byte("schedule: \"30 2 * * *\"\nprompt: x\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		after time.Time
		want  time.Time
	}{
		// 02:30 New York in winter is 07:30 UTC.
		{time.Date(2025, 1, 10, 0, 0, 0, 0, time.UTC), time.Date(2025, 1, 10, 7, 30, 0, 0, time.UTC)},
		// Exactly at an occurrence: the next one is a day later.
		{time.Date(2025, 1, 10, 7, 30, 0, 0, time.UTC), time.Date(2025, 1, 11, 7, 30, 0, 0, time.UTC)},
		// Summer: 06:30 UTC.
		{time.Date(2025, 7, 1, 12, 0, 0, 0, time.UTC), time.Date(2025, 7, 2, 6, 30, 0, 0, time.UTC)},
	} {
		got := sc.Next(tt.after, ny)
		if !got.Equal(tt.want) || got.Location() != time.UTC {
			t.Errorf("Next(%s) = %s, want %s", tt.after, got, tt.want)
		}
		if !sc.IsOccurrence(tt.want, ny) {
			t.Errorf("IsOccurrence(%s) = false", tt.want)
		}
	}
	if sc.IsOccurrence(time.Date(2025, 1, 10, 7, 31, 0, 0, time.UTC), ny) {
		t.Error("07:31 UTC is not an occurrence")
	}
	if sc.IsOccurrence(time.Date(2025, 1, 10, 2, 30, 0, 0, time.UTC), ny) {
		t.Error("02:30 UTC is not an occurrence in New York")
	}
	if got := (core.Schedule{}).Next(time.Now(), nil); !got.IsZero() {
		t.Errorf("zero Schedule Next = %s, want zero", got)
	}
}

func TestScheduleYAMLRoundTrip(t *testing.T) {
	for _, src := range []string{
		dailyYAML,
		"schedule: \"*/5 * * * *\"\nprompt: \"- a list? no\"\n",
		"enabled: false\nschedule: \"@hourly\"\nprompt: |\n  line one: with colon\n  \"quoted\" # not a comment\nmodules:\n  input: [a, b]\n  output: [c]\ndelivery:\n  mode: telegram\n  chat_id: -42\n",
	} {
		in, err := core.ParseSchedule("in.yaml", "x", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		out, err := in.YAML()
		if err != nil {
			t.Fatal(err)
		}
		back, err := core.ParseSchedule("out.yaml", "x", out)
		if err != nil {
			t.Fatalf("re-parse of\n%s: %v", out, err)
		}
		if in.Cron != back.Cron || in.Prompt != back.Prompt || in.Enabled != back.Enabled ||
			!reflect.DeepEqual(in.Slots, back.Slots) || !reflect.DeepEqual(in.Delivery, back.Delivery) {
			t.Errorf("round trip changed the schedule:\n in: %+v\nout: %+v\n%s", in, back, out)
		}
	}
}
