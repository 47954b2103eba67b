package schedule_test

import (
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/schedule"
)

func TestResolveTimezone(t *testing.T) {
	if _, err := time.LoadLocation("Asia/Tokyo"); err != nil {
		t.Skipf("no tzdata: %v", err)
	}
	t.Setenv("TZ", "Europe/Paris")
	for _, tt := range []struct {
		flag, env, config string
		name, source      string
		explicit          bool
		err               string
	}{
		{"Asia/Tokyo", "UTC", "Europe/Berlin", "Asia/Tokyo", "cli", true, ""},
		{" ", "UTC", "Europe/Berlin", "UTC", "env:DEMIURGE_TIMEZONE", true, ""},
		{"", "", "Europe/Berlin", "Europe/Berlin", "config.yaml:runtime.timezone", true, ""},
		{"", "", "", "Europe/Paris", "server-local", false, ""},
		{"", "Mars/Olympus", "UTC", "", "", false, "unknown timezone: Mars/Olympus (from env:DEMIURGE_TIMEZONE)"},
		{"Local", "", "", "", "", false, "unknown timezone: Local (from cli)"},
	} {
		tz, err := schedule.ResolveTimezone(tt.flag, tt.env, tt.config)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err || demiurge.ErrorCode(err) != demiurge.ECONFIG {
				t.Errorf("%q/%q/%q: error %v, want %q", tt.flag, tt.env, tt.config, err, tt.err)
			}
			continue
		}
		if err != nil || tz.Name != tt.name || tz.Source != tt.source || tz.Explicit != tt.explicit || tz.Location.String() != tt.name {
			t.Errorf("%q/%q/%q: %+v, %v", tt.flag, tt.env, tt.config, tz, err)
		}
	}
}

func TestTimezoneMetadata(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skipf("no tzdata: %v", err)
	}
	m := schedule.Timezone{Location: tokyo, Name: "Asia/Tokyo", Source: "cli", Explicit: true}.Metadata(time.Date(2025, 3, 10, 0, 30, 0, 0, time.UTC))
	want := map[string]any{
		"runtime_timezone": "Asia/Tokyo", "runtime_timezone_source": "cli", "runtime_timezone_explicit": true,
		"runtime_timezone_offset": "+0900", "runtime_local_now": "2025-03-10T09:30:00+09:00",
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
}
