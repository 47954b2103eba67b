package slash_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/internal/tui/slash"
)

// statusRows reads /status's key/value table into a map, failing on a key
// that appears twice.
func statusRows(t *testing.T, env slash.Env) (map[string]string, string) {
	t.Helper()
	out := run(t, env, "/status").Notice
	rows := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		line = strings.Trim(strings.TrimSpace(line), "|")
		k, v, ok := strings.Cut(line, " | ")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if _, dup := rows[k]; dup {
			t.Fatalf("/status has two %q rows:\n%s", k, out)
		}
		rows[k] = v
	}
	return rows, out
}

func wantRows(t *testing.T, rows map[string]string, out string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if rows[k] != v {
			t.Errorf("/status %s = %q, want %q", k, rows[k], v)
		}
	}
	if t.Failed() {
		t.Logf("/status:\n%s", out)
	}
}

// On a fresh home the provider is the default fake one, which needs no
// URL or key; the tool display is the fallback core's.
func TestStatusSourcesDefaults(t *testing.T) {
	env := newEnv(t, newHost(t))
	rows, out := statusRows(t, env)
	wantRows(t, rows, out, map[string]string{
		"provider_source": "default", "model_source": "profile",
		"base_url": "not configured", "base_url_source": "not configured", "api_key": "not configured",
		"tool_display": "summary", "tool_display_source": "fallback", // agents/agent.yaml sets it
		"channel_busy_mode":  "interrupt",
		"user_message_align": "left", "demiurge_theme_color": "#ff9afc", "user_theme_color": "#9cc9ff",
		"debug_show_system_prompt": "false",
		"approval_mode":            "ask", "approval_cached_allows": "0",
	})
	// The order of the spec: the sources right after their settings, the
	// live rows last.
	contains(t, "/status order", out, "| provider ", "| provider_source ", "| provider_api_mode ", "| model ",
		"| model_source ", "| base_url ", "| base_url_source ", "| api_key ", "| tool_display ", "| tool_display_source ",
		"| runtime_timezone ", "| runtime_store ", "| channel_busy_mode ", "| channel_busy_mode_source ",
		"| user_message_align ", "| user_message_align_source ", "| demiurge_theme_color ", "| demiurge_theme_color_source ",
		"| user_theme_color ", "| user_theme_color_source ", "| debug_show_system_prompt ", "| debug_show_system_prompt_source ",
		"| approval_mode ", "| approval_cached_allows ", "| background_tasks ", "| session_id ",
		"| current_status ", "| busy_mode ", "| queued_inputs ", "| message_count ")
}

// Settings config.yaml makes say so; a key read from the environment is
// named by its variable, one from config.yaml by its key, and neither
// value appears; a display changed with /tool-display says that.
func TestStatusSourcesConfigured(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	config := "channel:\n  busy_mode: queue\nui:\n  user_theme_color: '#123456'\ndebug:\n  show_system_prompt: true\n" +
		"providers:\n  custom:\n    local:\n      api_mode: openai-chat\n      base_url: https://llm.example.com/v1\n      api_key: sk-config-SECRET\n" +
		"    viaenv:\n      api_mode: openai-chat\n      base_url: https://other.example.com/v1\n      api_key_env: STATUS_TEST_KEY\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "STATUS_TEST_KEY" {
			return "sk-env-SECRET"
		}
		return ""
	}
	h := openHost(t, host.Options{Home: home, Getenv: getenv})
	env := newEnv(t, h)
	env.provider, env.model = "local", "m1"
	rows, out := statusRows(t, env)
	wantRows(t, rows, out, map[string]string{
		"provider": "local", "provider_source": "cli", "model": "m1", "model_source": "cli",
		"base_url_source": "config:providers.custom.local.base_url", "api_key": "config:providers.custom.local.api_key",
		"channel_busy_mode": "queue", "channel_busy_mode_source": "config",
		"user_theme_color": "#123456", "user_theme_color_source": "config",
		"demiurge_theme_color": "#ff9afc", "demiurge_theme_color_source": "default",
		"user_message_align_source": "default",
		"debug_show_system_prompt":  "true", "debug_show_system_prompt_source": "config",
	})
	env.provider = "viaenv"
	env.display = slash.ToolFull
	rows, out = statusRows(t, env)
	wantRows(t, rows, out, map[string]string{
		"api_key": "env:STATUS_TEST_KEY", "tool_display": "full", "tool_display_source": "/tool-display",
	})
	for _, secret := range []string{"sk-config-SECRET", "sk-env-SECRET"} {
		if strings.Contains(out, secret) {
			t.Fatalf("/status shows the key %q", secret)
		}
	}
}

// An "allow for this session" answer is counted in approval_cached_allows.
func TestStatusCachedAllows(t *testing.T) {
	h := newHost(t, demiurgetest.Call("write_file", map[string]any{"path": "a.txt", "content": "x"}), demiurgetest.Reply("done"))
	env := newEnv(t, h)
	env.turnWith(t, "write it", effect.DecisionAllowSession)
	rows, out := statusRows(t, env)
	wantRows(t, rows, out, map[string]string{"approval_cached_allows": "1"})
}
