package schedule

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
)

// TimezoneEnv is the environment variable that sets the runtime timezone.
const TimezoneEnv = "DEMIURGE_TIMEZONE"

// Timezone is the runtime timezone schedules run in and where it came
// from.
type Timezone struct {
	Location *time.Location
	Name     string // IANA name, or what describes the host's zone
	Source   string // "cli", "env:DEMIURGE_TIMEZONE", "config.yaml:runtime.timezone" or "server-local"
	Explicit bool   // set by the operator rather than taken from the host
}

// ResolveTimezone picks the runtime timezone: the --timezone flag, then
// env (the value of DEMIURGE_TIMEZONE), then config.yaml's runtime.timezone,
// then the host's own zone (TZ, else /etc/localtime, else time.Local).
// Blank values are skipped. An unknown name fails with ECONFIG
// "unknown timezone: <name> (from <source>)".
func ResolveTimezone(flag, env, config string) (Timezone, error) {
	for _, c := range []struct{ value, source string }{
		{flag, "cli"}, {env, "env:" + TimezoneEnv}, {config, "config.yaml:runtime.timezone"},
	} {
		name := strings.TrimSpace(c.value)
		if name == "" {
			continue
		}
		loc, err := time.LoadLocation(name)
		if err != nil || strings.EqualFold(name, "local") {
			return Timezone{}, demiurge.Errorf(demiurge.ECONFIG, "unknown timezone: %s (from %s)", name, c.source)
		}
		return Timezone{Location: loc, Name: name, Source: c.source, Explicit: true}, nil
	}
	return HostTimezone(), nil
}

// HostTimezone returns the host's own zone, named by its IANA name when
// TZ or /etc/localtime reveals it.
func HostTimezone() Timezone {
	if name := hostZoneName(); name != "" {
		if loc, err := time.LoadLocation(name); err == nil {
			return Timezone{Location: loc, Name: name, Source: "server-local"}
		}
	}
	return Timezone{Location: time.Local, Name: time.Now().Format("MST"), Source: "server-local"}
}

func hostZoneName() string {
	if tz := strings.TrimPrefix(strings.TrimSpace(os.Getenv("TZ")), ":"); tz != "" && !filepath.IsAbs(tz) {
		return tz
	}
	target, err := filepath.EvalSymlinks("/etc/localtime")
	if err != nil {
		return ""
	}
	const marker = "/zoneinfo/"
	if i := strings.LastIndex(filepath.ToSlash(target), marker); i >= 0 {
		return filepath.ToSlash(target)[i+len(marker):]
	}
	return ""
}

// Metadata returns the runtime timezone facts tool results carry:
// runtime_timezone, runtime_timezone_source, runtime_timezone_explicit,
// runtime_timezone_offset (e.g. "+0200") and runtime_local_now (RFC 3339).
func (tz Timezone) Metadata(now time.Time) map[string]any {
	loc := tz.Location
	if loc == nil {
		loc = time.UTC
	}
	local := now.In(loc)
	return map[string]any{
		"runtime_timezone":          tz.Name,
		"runtime_timezone_source":   tz.Source,
		"runtime_timezone_explicit": tz.Explicit,
		"runtime_timezone_offset":   local.Format("-0700"),
		"runtime_local_now":         local.Format(time.RFC3339),
	}
}
