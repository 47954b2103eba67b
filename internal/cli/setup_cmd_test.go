package cli_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const testKey = "sk-setup-test-key-0123456789"

// noSecret fails if any output of r shows the test key.
func noSecret(t *testing.T, r result, secrets ...string) {
	t.Helper()
	for _, s := range append(secrets, testKey) {
		if strings.Contains(r.stdout, s) || strings.Contains(r.stderr, s) {
			t.Fatalf("output shows a secret:\nstdout %s\nstderr %s", r.stdout, r.stderr)
		}
	}
}

type profileOut struct {
	Type         string  `json:"type"`
	APIMode      string  `json:"api_mode"`
	BaseURL      string  `json:"base_url"`
	APIKeyEnv    string  `json:"api_key_env"`
	APIKey       *string `json:"api_key"`
	APIKeySource string  `json:"api_key_source"`
	KeyAvailable bool    `json:"key_available"`
}

func TestSetupStatusCreatesNothing(t *testing.T) {
	h := newHome(t)
	var st struct {
		Home            string                `json:"home"`
		HostConfig      string                `json:"host_config"`
		EnvFile         string                `json:"env_file"`
		DefaultProvider *string               `json:"default_provider"`
		Timezone        string                `json:"runtime_timezone"`
		TimezoneSource  string                `json:"runtime_timezone_source"`
		Providers       map[string]profileOut `json:"providers"`
		CoreModel       map[string]string     `json:"core_model"`
	}
	h.decode(0, &st, "setup", "status", "--json")
	if _, err := os.Stat(h.dir); !os.IsNotExist(err) {
		t.Fatalf("status created the home: %v", err)
	}
	if st.DefaultProvider != nil || len(st.Providers) != 10 || st.EnvFile != filepath.Join(h.dir, ".env") {
		t.Fatalf("status %+v", st)
	}
	if p := st.Providers["moonshot"]; p.APIKeyEnv != "KIMI_API_KEY" || p.APIKeySource != "env:KIMI_API_KEY (missing)" || p.KeyAvailable {
		t.Errorf("moonshot %+v", p)
	}
	if got, want := st.CoreModel["provider"], "fake"; got != want {
		t.Errorf("core model provider %q, want %q", got, want)
	}
	// The plain form: one line per top-level key.
	r := h.ok("setup", "status")
	if !strings.Contains(r.stdout, "default_provider: null\n") || !strings.Contains(r.stdout, `core_model: {"core": "assistant", `) {
		t.Errorf("plain status:\n%s", r.stdout)
	}
}

func TestSetupProvidersLifecycle(t *testing.T) {
	h := newHome(t)
	var add struct {
		Provider   string     `json:"provider"`
		Profile    profileOut `json:"profile"`
		Default    *string    `json:"default"`
		EnvWritten string     `json:"env_written"`
	}
	noSecret(t, h.decode(0, &add, "setup", "providers", "add", "OpenAI", "--api-key", testKey, "--write-env", "--set-default", "--json"))
	if add.Provider != "openai" || add.Default == nil || *add.Default != "openai" || add.EnvWritten != "OPENAI_API_KEY" ||
		!add.Profile.KeyAvailable || add.Profile.APIKeySource != "env:OPENAI_API_KEY (.env)" || add.Profile.APIKey != nil {
		t.Fatalf("add %+v", add)
	}
	env := filepath.Join(h.dir, ".env")
	if st, err := os.Stat(env); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf(".env: %v %v", st, err)
	}
	if b, _ := os.ReadFile(filepath.Join(h.dir, "config.yaml")); strings.Contains(string(b), testKey) {
		t.Fatal("config.yaml holds the key")
	}

	// A custom profile: the key variable defaults from the id, the key
	// goes to .env; other lines of .env stay.
	if err := os.WriteFile(env, append(mustRead(t, env), []byte("# mine\nOTHER=1\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	noSecret(t, h.decode(0, &add, "setup", "providers", "add", "my_llm", "--base-url", "http://127.0.0.1:9/v1/", "--api-key", "sk-custom-secret-99", "--write-env", "--json"), "sk-custom-secret-99")
	if add.Provider != "my-llm" || add.Profile.Type != "custom" || add.Profile.APIKeyEnv != "MY_LLM_API_KEY" || add.Profile.BaseURL != "http://127.0.0.1:9/v1" || !add.Profile.KeyAvailable {
		t.Fatalf("custom add %+v", add)
	}
	if s := string(mustRead(t, env)); !strings.Contains(s, "# mine\nOTHER=1\n") || !strings.Contains(s, `MY_LLM_API_KEY="sk-custom-secret-99"`) {
		t.Fatalf(".env lost lines or the key:\n%s", s)
	}
	h.decode(0, &add, "setup", "providers", "edit", "my-llm", "--api-mode", "anthropic-messages", "--json")
	if add.Profile.APIMode != "anthropic-messages" || add.Profile.BaseURL != "http://127.0.0.1:9/v1" {
		t.Fatalf("edit kept nothing: %+v", add)
	}

	// write-env reads the value from stdin and keeps the other lines.
	r := h.run("tok-from-stdin-123456\n", "setup", "write-env", "EXTRA_TOKEN", "--json")
	var we struct {
		EnvFile string `json:"env_file"`
		Key     string `json:"key"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &we); r.code != 0 || err != nil || we.Key != "EXTRA_TOKEN" || we.EnvFile != env {
		t.Fatalf("write-env: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	noSecret(t, r, "tok-from-stdin-123456")
	if s := string(mustRead(t, env)); !strings.Contains(s, `EXTRA_TOKEN="tok-from-stdin-123456"`) || !strings.Contains(s, "# mine\nOTHER=1\n") {
		t.Fatalf(".env after write-env:\n%s", s)
	}
	wantOneLine(t, h.run("", "setup", "write-env", "1BAD", "--value", "x"), 2, `invalid variable name "1BAD"`)

	var list struct {
		Providers       map[string]profileOut `json:"providers"`
		DefaultProvider *string               `json:"default_provider"`
	}
	noSecret(t, h.decode(0, &list, "setup", "providers", "list", "--json"), "sk-custom-secret-99")
	if len(list.Providers) != 11 || !list.Providers["openai"].KeyAvailable || list.Providers["deepseek"].KeyAvailable || *list.DefaultProvider != "openai" {
		t.Fatalf("list %+v", list)
	}
	var show struct {
		Provider string     `json:"provider"`
		Profile  profileOut `json:"profile"`
	}
	h.decode(0, &show, "setup", "providers", "show", "my-llm", "--json")
	if show.Provider != "my-llm" || show.Profile.APIMode != "anthropic-messages" {
		t.Fatalf("show %+v", show)
	}
	var def struct {
		Default *string `json:"default_provider"`
	}
	h.decode(0, &def, "setup", "providers", "set-default", "my-llm", "--json")
	if def.Default == nil || *def.Default != "my-llm" {
		t.Fatalf("set-default %+v", def)
	}
	var rm struct {
		Removed         string  `json:"removed"`
		DefaultProvider *string `json:"default_provider"`
	}
	h.decode(0, &rm, "setup", "providers", "remove", "my-llm", "--json")
	if rm.Removed != "my-llm" || rm.DefaultProvider != nil {
		t.Fatalf("remove %+v (the default pointed there)", rm)
	}

	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"setup", "providers", "show", "nope"}, "unknown provider profile: nope (known: fake, anthropic, dashscope, deepseek, minimax, minimax-cn, moonshot, openai, openrouter, siliconflow, zai)"},
		{[]string{"setup", "providers", "set-default", "nope"}, "(known: fake, anthropic,"},
		{[]string{"setup", "providers", "test", "nope"}, "(known: fake, anthropic,"},
		{[]string{"setup", "model", "set", "--provider", "nope", "--model", "m"}, "(known: fake, anthropic,"},
		{[]string{"setup", "providers", "remove", "nope"}, "provider profile not found: nope"},
		{[]string{"setup", "providers", "add", "openai", "--api-key", testKey}, "--api-key requires --write-env"},
		{[]string{"setup", "providers", "add", "openai", "--api-mode", "anthropic-messages"}, "--api-mode is only supported for custom provider profiles"},
		{[]string{"setup", "providers", "add", "openai", "--preset", "deepseek"}, "--preset must match the builtin provider id"},
		{[]string{"setup", "providers", "add", "local"}, "--base-url is required for custom provider profiles"},
		{[]string{"setup", "providers", "add", "fake", "--base-url", "http://x"}, "cannot shadow builtin provider: fake"},
		{[]string{"setup", "providers", "add", "9x", "--base-url", "http://x"}, "invalid provider profile id: 9x"},
		{[]string{"run", "--provider", "nope", "hi"}, "unknown provider profile: nope (known: "},
	} {
		wantOneLine(t, h.run("", bad.args...), 2, bad.want)
	}
}

func TestSetupTimezoneAndModel(t *testing.T) {
	h := newHome(t)
	var tz struct {
		Timezone string `json:"runtime_timezone"`
		Source   string `json:"runtime_timezone_source"`
	}
	h.decode(0, &tz, "setup", "timezone", "set", "Asia/Tokyo", "--json")
	if tz.Timezone != "Asia/Tokyo" || tz.Source != "config.yaml:runtime.timezone" {
		t.Fatalf("set %+v", tz)
	}
	wantOneLine(t, h.run("", "setup", "timezone", "set", "Nowhere/Town"), 2, "must be an IANA timezone string")
	// --timezone wins over config.yaml, in status and in the doctor.
	var st0 struct {
		Timezone string `json:"runtime_timezone"`
		Source   string `json:"runtime_timezone_source"`
	}
	h.decode(0, &st0, "--timezone", "America/Lima", "setup", "status", "--json")
	if st0.Timezone != "America/Lima" || st0.Source != "cli" {
		t.Fatalf("status with --timezone %+v", st0)
	}
	var doc struct {
		Timezone struct{ Name, Source string } `json:"timezone"`
	}
	h.decode(0, &doc, "--timezone", "America/Lima", "doctor", "--json")
	if doc.Timezone.Name != "America/Lima" || doc.Timezone.Source != "cli" {
		t.Fatalf("doctor with --timezone %+v", doc.Timezone)
	}
	wantOneLine(t, h.run("", "--timezone", "Nowhere/Town", "run", "hi"), 2, "unknown timezone: Nowhere/Town (from cli)")
	h.decode(0, &tz, "setup", "timezone", "clear", "--json")
	if tz.Source != "server-local" {
		t.Fatalf("clear %+v", tz)
	}

	var m struct {
		Core, Path, Provider, Model, Revision string
		Previous                              string `json:"previous_revision"`
	}
	h.decode(0, &m, "--core", "assistant", "setup", "model", "set", "--provider", "DeepSeek", "--model", "deepseek-v4-flash", "--json")
	if m.Core != "assistant" || m.Provider != "deepseek" || m.Model != "deepseek-v4-flash" || m.Revision == "" || m.Revision == m.Previous {
		t.Fatalf("model set %+v", m)
	}
	y := string(mustRead(t, m.Path))
	if !strings.Contains(y, "provider: deepseek") || !strings.Contains(y, "model_name: deepseek-v4-flash") {
		t.Fatalf("agent.yaml:\n%s", y)
	}
	var st struct {
		CoreModel map[string]string `json:"core_model"`
	}
	h.decode(0, &st, "setup", "status", "--json")
	if st.CoreModel["provider"] != "deepseek" || st.CoreModel["provider_source"] != "agent.yaml:model.provider" || st.CoreModel["model"] != "deepseek-v4-flash" {
		t.Fatalf("status after model set %+v", st.CoreModel)
	}
	var versions []map[string]any
	h.decode(0, &versions, "core", "versions", "--json")
	if len(versions) < 2 || versions[0]["revision"] != m.Revision {
		t.Fatalf("the model change is not the live revision: %v", versions)
	}
	wantOneLine(t, h.run("", "setup", "model", "set", "--provider", "fake"), 2, "model name is required")
	// An option the provider's protocol does not have is refused, and
	// agent.yaml is left as it was.
	h.coreFile("assistant/agent.yaml", strings.Replace(y, "model_options: {}", "model_options: {reasoning_effort: high}", 1))
	before := mustRead(t, m.Path)
	wantOneLine(t, h.run("", "setup", "model", "set", "--provider", "anthropic", "--model", "claude-x"), 2, "model.model_options.reasoning_effort: not an option of anthropic-messages")
	if after := mustRead(t, m.Path); string(after) != string(before) {
		t.Fatalf("a refused model set changed agent.yaml:\n%s", after)
	}
}

// vendor is a loopback server shaped like an OpenAI or Anthropic API that
// answers per model: "ok" succeeds, "bad-key" is 401, "gone" is 404,
// "busy" is 429.
func vendor(t *testing.T, anthropic bool) (*httptest.Server, func() http.Header) {
	var mu sync.Mutex
	var last http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Model string }
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &body)
		mu.Lock()
		last = r.Header.Clone()
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		status, msg := http.StatusOK, ""
		switch body.Model {
		case "bad-key":
			status, msg = http.StatusUnauthorized, "invalid x-api-key"
		case "gone":
			status, msg = http.StatusNotFound, "model: gone not found"
		case "busy":
			status, msg = http.StatusTooManyRequests, "quota exceeded"
		}
		w.WriteHeader(status)
		switch {
		case msg != "":
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"type": "error", "message": msg}})
		case anthropic:
			io.WriteString(w, `{"type":"message","model":"ok","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn"}`)
		default:
			io.WriteString(w, `{"model":"ok","choices":[{"message":{"role":"assistant","content":"ok"}}]}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() http.Header {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

func TestSetupProvidersTestAgainstLoopbackVendors(t *testing.T) {
	for _, anthropic := range []bool{false, true} {
		id, keyVar, auth := "openai", "OPENAI_API_KEY", "Authorization"
		if anthropic {
			id, keyVar, auth = "anthropic", "ANTHROPIC_API_KEY", "X-Api-Key"
		}
		t.Run(id, func(t *testing.T) {
			h := newHome(t)
			srv, last := vendor(t, anthropic)
			h.ok("setup", "providers", "add", id, "--base-url", srv.URL, "--api-key", testKey, "--write-env")
			var ok struct {
				Provider  string `json:"provider"`
				Model     string `json:"model"`
				OK        bool   `json:"ok"`
				APIKey    string `json:"api_key"`
				Response  string `json:"response"`
				LatencyMS int64  `json:"latency_ms"`
				Error     *struct {
					Kind    string `json:"kind"`
					Status  int    `json:"http_status"`
					Message string `json:"message"`
				} `json:"error"`
			}
			noSecret(t, h.decode(0, &ok, "setup", "providers", "test", id, "--model", "ok", "--json"))
			if !ok.OK || ok.Response != "ok" || ok.Model != "ok" || ok.APIKey != "env:"+keyVar || ok.Error != nil || ok.LatencyMS < 0 {
				t.Fatalf("test ok: %+v", ok)
			}
			if got := last().Get(auth); !strings.Contains(got, testKey) {
				t.Fatalf("%s=%q: the key from .env was not sent", auth, got)
			}
			r := h.ok("setup", "providers", "test", id, "--model", "ok")
			if !strings.HasPrefix(r.stdout, id+" ok: model ok answered in ") || strings.Count(r.stdout, "\n") != 1 {
				t.Errorf("plain success: %q", r.stdout)
			}
			for _, c := range []struct {
				model, kind, text string
				status            int
			}{
				{"bad-key", "key", "the key was refused", 401},
				{"gone", "model", "the model or endpoint is unknown", 404},
				{"busy", "quota", "rate limit or quota exceeded", 429},
			} {
				r := h.run("", "setup", "providers", "test", id, "--model", c.model)
				wantOneLine(t, r, 1, id+" failed after ", "(model "+c.model+", "+srv.URL, c.text, "HTTP "+itoa(c.status))
				noSecret(t, r)
				h.decode(1, &ok, "setup", "providers", "test", id, "--model", c.model, "--json")
				if ok.OK || ok.Error == nil || ok.Error.Kind != c.kind || ok.Error.Status != c.status {
					t.Errorf("%s: %+v", c.model, ok)
				}
			}
		})
	}
}

func TestEnvFilePrecedenceAndRefusal(t *testing.T) {
	h := newHome(t)
	srv, last := vendor(t, false)
	h.ok("init")
	env := filepath.Join(h.dir, ".env")
	if err := os.WriteFile(env, []byte("OPENAI_API_KEY="+testKey+"\nOPENAI_BASE_URL="+srv.URL+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := h.ok("run", "--provider", "openai", "--model", "ok", "hi")
	if got, want := last().Get("Authorization"), "Bearer "+testKey; got != want {
		t.Fatalf("Authorization=%q, want the .env key %q", got, want)
	}
	noSecret(t, r)
	// The explicit environment wins over .env.
	t.Setenv("OPENAI_API_KEY", "sk-from-the-shell-000000")
	h.ok("run", "--provider", "openai", "--model", "ok", "hi")
	if got, want := last().Get("Authorization"), "Bearer sk-from-the-shell-000000"; got != want {
		t.Fatalf("Authorization=%q, want the shell's %q", got, want)
	}
	var list struct {
		Providers map[string]profileOut `json:"providers"`
	}
	h.decode(0, &list, "setup", "providers", "list", "--json")
	if got := list.Providers["openai"].APIKeySource; got != "env:OPENAI_API_KEY" {
		t.Errorf("source %q, want the environment's", got)
	}
	if got := list.Providers["openai"].BaseURL; got != srv.URL {
		t.Errorf("base URL %q, want .env's %q", got, srv.URL)
	}

	// Wider than 0600, a symbolic link, or a bad line: refused, one line
	// naming the file (and the line), exit 2.
	if err := os.Chmod(env, 0o640); err != nil {
		t.Fatal(err)
	}
	wantOneLine(t, h.run("", "setup", "status"), 2, env, "mode 0640")
	wantOneLine(t, h.run("", "run", "hi"), 2, env, "mode 0640")
	if err := os.Chmod(env, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "elsewhere.env")
	if err := os.Rename(env, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(link, env); err != nil {
		t.Fatal(err)
	}
	wantOneLine(t, h.run("", "run", "hi"), 2, env, "symbolic link")
	os.Remove(env)
	if err := os.WriteFile(env, []byte("A=1\n\nthis is not a pair\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantOneLine(t, h.run("", "run", "hi"), 2, env+":3: invalid .env line 3: expected KEY=VALUE")
	// version and completion do not read .env.
	h.ok("version")
}

func TestVersionAndCompletion(t *testing.T) {
	h := newHome(t)
	var v map[string]any
	h.decode(0, &v, "version", "--json")
	for _, k := range []string{"version", "commit", "go_version", "build_date", "platform"} {
		if s, _ := v[k].(string); s == "" {
			t.Errorf("version --json: %s missing in %v", k, v)
		}
	}
	if r := h.ok("--version"); !strings.HasPrefix(r.stdout, "demiurge ") || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("--version: %q", r.stdout)
	}
	for shell, marker := range map[string]string{"bash": "__start_demiurge", "zsh": "#compdef demiurge", "fish": "complete -c demiurge", "powershell": "Register-ArgumentCompleter"} {
		if r := h.ok("completion", shell); !strings.Contains(r.stdout, marker) {
			t.Errorf("completion %s lacks %q", shell, marker)
		}
	}
	wantOneLine(t, h.run("", "completion", "tcsh"), 2, "unknown shell")
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
