package terminal

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/process"
)

func TestRenderStream(t *testing.T) {
	for _, tt := range []struct {
		name     string
		total    int
		limit    int
		wantNote string
	}{
		{"fits", 10, 10, ""},
		{"under the limit", 11, 10_000, ""},
		{"13000 of 12000", 13000, 12000, "...[truncated 1040 chars; showing tail]\n"},
		// Keeping fewer characters adds a digit to the count: the note
		// still names exactly what is left out.
		{"digit boundary", 12000 + 9960, 12000, "...[truncated 10001 chars; showing tail]\n"},
		{"huge", 5_000_000, 12000, "...[truncated 4988043 chars; showing tail]\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			full := strings.Repeat("é", tt.total)
			tail := lastChars(full, max(tt.limit, 0))
			r := renderStream(tail, int64(tt.total), tt.limit)
			if tt.wantNote == "" {
				if r.text != tail || r.retained != utf8.RuneCountInString(tail) {
					t.Fatalf("untruncated text changed: %d chars, retained %d", utf8.RuneCountInString(r.text), r.retained)
				}
				return
			}
			if got := utf8.RuneCountInString(r.text); got != tt.limit {
				t.Fatalf("rendered %d chars, want exactly %d", got, tt.limit)
			}
			if !strings.HasPrefix(r.text, tt.wantNote) {
				t.Fatalf("note %q, want %q", r.text[:min(len(r.text), 50)], tt.wantNote)
			}
			kept := strings.TrimPrefix(r.text, tt.wantNote)
			if n := utf8.RuneCountInString(kept); n != r.retained || fmt.Sprint(tt.total-n) != strings.Fields(tt.wantNote)[1] {
				t.Fatalf("kept %d chars, retained %d, note %q", n, r.retained, tt.wantNote)
			}
		})
	}
}

func TestFormatTerminalResult(t *testing.T) {
	for _, tt := range []struct {
		name string
		res  process.Result
		want string
		code int
	}{
		{"silent", process.Result{}, "exit_code: 0", 0},
		{"stdout only", process.Result{Stdout: process.Stream{Tail: "a\n", TotalBytes: 2, TotalChars: 2}}, "exit_code: 0\nstdout:\na\n", 0},
		{"both", process.Result{ExitCode: 2, Stdout: process.Stream{Tail: "o", TotalChars: 1}, Stderr: process.Stream{Tail: "e", TotalChars: 1}}, "exit_code: 2\nstdout:\no\nstderr:\ne", 2},
		{"timed out", process.Result{ExitCode: -1, Signal: "SIGKILL", TimedOut: true, Stderr: process.Stream{Tail: "x", TotalChars: 1}}, "exit_code: 124\ntimed_out: true\nstderr:\nx", 124},
		{"secret slipped past", process.Result{Stdout: process.Stream{Tail: "tok=v4lue!", TotalChars: 10}}, "exit_code: 0\nstdout:\ntok=<redacted:T>!", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := formatTerminalResult(tt.res, map[string]string{"v4lue": "<redacted:T>"})
			if got.content != tt.want || got.exitCode != tt.code {
				t.Fatalf("content %q code %d, want %q %d", got.content, got.exitCode, tt.want, tt.code)
			}
		})
	}
}

func TestCommandEnv(t *testing.T) {
	host := []string{
		"Path=/first", "PATH=/second", "LANG=", "LANG=C.UTF-8", "lc_all=C", "TERM=xterm",
		"OPENAI_API_KEY=sk-x", "AWS_SECRET_ACCESS_KEY=a", "HOME=/root", "TMPDIR=/tmp", "SSH_AUTH_SOCK=/s", "malformed",
	}
	got := commandEnv(host, "/h", "/h/tmp", map[string]string{"A": "1", "DEMIURGE_TIMEZONE": "x", "TERM": "dumb"}, map[string]string{"B": "secret"})
	want := append([]string{"A=1", "B=secret", "HOME=/h", "LANG=C.UTF-8", "PATH=/first", "TEMP=/h/tmp", "TERM=dumb", "TMP=/h/tmp", "TMPDIR=/h/tmp", "lc_all=C"}, gitSafetyEnv()...)
	slices.SortFunc(want, func(a, b string) int {
		ka, _, _ := strings.Cut(a, "=")
		kb, _, _ := strings.Cut(b, "=")
		return strings.Compare(ka, kb)
	})
	if !slices.Equal(got, want) {
		t.Fatalf("env\n got %q\nwant %q", got, want)
	}
	// An overlay cannot undo git's safety settings.
	got = commandEnv(host, "/h", "/h/tmp", map[string]string{"GIT_CONFIG_COUNT": "0", "GIT_PAGER": "less"}, nil)
	if envLookup(got, "GIT_PAGER") != "cat" || envLookup(got, "GIT_CONFIG_COUNT") == "0" {
		t.Fatalf("overlay overrode git safety: %q", got)
	}
}

func TestParseEnvOverlay(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]any
		want map[string]string
		err  string
	}{
		{nil, nil, ""},
		{map[string]any{"A": "x", "_b1": float64(3), "C": true, "D": 1.5}, map[string]string{"A": "x", "_b1": "3", "C": "true", "D": "1.5"}, ""},
		{map[string]any{"A-B": "x"}, nil, "invalid terminal environment name: A-B"},
		{map[string]any{"": "x"}, nil, "invalid terminal environment name: "},
	} {
		got, out := parseEnvOverlay(tt.env)
		if tt.err != "" {
			if out == nil || out.Content != tt.err {
				t.Errorf("%v: %v, want %q", tt.env, out, tt.err)
			}
			continue
		}
		if out != nil || fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%v: %v %v, want %v", tt.env, got, out, tt.want)
		}
	}
}

func TestParseSecretBindings(t *testing.T) {
	item := func(kv ...any) bindingArg {
		var b bindingArg
		for i := 0; i < len(kv); i += 2 {
			switch v := kv[i+1].(type) {
			case string:
				if kv[i] == "source" {
					b.Source = v
				} else {
					b.Target = &v
				}
			case int:
				n := int64(v)
				b.ExpiresInSeconds = &n
			}
		}
		return b
	}
	many := make([]bindingArg, 17)
	for i := range many {
		many[i] = item("source", fmt.Sprintf("env:S%d", i))
	}
	for _, tt := range []struct {
		name       string
		bindings   []bindingArg
		background bool
		want       string // error, or the parsed bindings as Name>Target/seconds
	}{
		{"none", nil, false, ""},
		{"empty", []bindingArg{}, true, ""},
		{"defaults", []bindingArg{item("source", "env:GH_TOKEN")}, false, "GH_TOKEN>GH_TOKEN/30"},
		{"target and expiry", []bindingArg{item("source", "env:A", "target", "B", "expires_in_seconds", 5)}, false, "A>B/5"},
		{"too many", many, false, "secret_bindings supports at most 16 entries"},
		{"background", []bindingArg{item("source", "env:A")}, true, "secret_bindings are not supported for background terminal commands"},
		{"no source", []bindingArg{item("target", "A")}, false, "secret_bindings[0].source must use env:<NAME>"},
		{"file source", []bindingArg{item("source", "file:/etc/passwd")}, false, "secret_bindings[0].source must use env:<NAME>"},
		{"bad source name", []bindingArg{item("source", "env:A-B")}, false, "secret_bindings[0].source has an invalid environment name"},
		{"bad target", []bindingArg{item("source", "env:A"), item("source", "env:B", "target", "1X")}, false, "secret_bindings[1].target has an invalid environment name"},
		{"reserved default target", []bindingArg{item("source", "env:PATH")}, false, "secret_bindings[0].target is a reserved execution environment target: PATH"},
		{"reserved any case", []bindingArg{item("source", "env:A", "target", "Ld_Library_Path")}, false, "secret_bindings[0].target is a reserved execution environment target: Ld_Library_Path"},
		{"pythonpath", []bindingArg{item("source", "env:A", "target", "PYTHONPATH")}, false, "secret_bindings[0].target is a reserved execution environment target: PYTHONPATH"},
		{"node options", []bindingArg{item("source", "env:A", "target", "NODE_OPTIONS")}, false, "secret_bindings[0].target is a reserved execution environment target: NODE_OPTIONS"},
		{"duplicate", []bindingArg{item("source", "env:A", "target", "T"), item("source", "env:B", "target", "T")}, false, "duplicate secret binding target: T"},
		{"zero expiry", []bindingArg{item("source", "env:A", "expires_in_seconds", 0)}, false, "secret_bindings[0].expires_in_seconds must be between 1 and the terminal timeout (30)"},
		{"over timeout", []bindingArg{item("source", "env:A", "expires_in_seconds", 31)}, false, "secret_bindings[0].expires_in_seconds must be between 1 and the terminal timeout (30)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, out := parseSecretBindings(tt.bindings, 30, tt.background)
			if out != nil {
				if out.Content != tt.want || !out.IsError || out.ExecutionStarted {
					t.Fatalf("refusal %q, want %q", out.Content, tt.want)
				}
				return
			}
			var parts []string
			for _, b := range got {
				parts = append(parts, fmt.Sprintf("%s>%s/%d", b.Name, b.Target, int(b.ExpiresIn.Seconds())))
			}
			if s := strings.Join(parts, ","); s != tt.want {
				t.Fatalf("bindings %q, want %q", s, tt.want)
			}
		})
	}
}

func TestRequireBindGrants(t *testing.T) {
	b := []secretBinding{{Name: "GH_TOKEN", Target: "GH_TOKEN"}}
	for _, tt := range []struct {
		grants []string
		ok     bool
	}{
		{[]string{"secret.bind:GH_TOKEN"}, true},
		{[]string{"secret.bind:*"}, false},
		{[]string{"secret.bind:GH_TOKEN2", "secret.bind", "terminal.exec"}, false},
		{nil, false},
	} {
		out := requireBindGrants(b, policy.NewGrants(tt.grants, nil))
		if tt.ok != (out == nil) {
			t.Errorf("grants %v: refusal %v", tt.grants, out)
		}
		if out != nil && (out.Content != "exact capability denied: secret.bind:GH_TOKEN for host" || out.Denial != "capability") {
			t.Errorf("grants %v: %q denial %q", tt.grants, out.Content, out.Denial)
		}
	}
	// A path grant is not a default grant.
	if out := requireBindGrants(b, policy.NewGrants(nil, map[string][]string{"agent/tools/x": {"secret.bind:GH_TOKEN"}})); out == nil {
		t.Error("a component grant handed out a secret")
	}
}

func TestResolveBindings(t *testing.T) {
	anchor := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	b := []secretBinding{{Name: "A", Target: "TA", ExpiresIn: 10 * time.Second}, {Name: "B", Target: "TB", ExpiresIn: 4 * time.Second}}
	env := map[string]string{"A": "alpha-value", "B": "beta-value"}
	bs, out := resolveBindings(b, anchor, anchor.Add(time.Second), func(k string) string { return env[k] })
	if out != nil {
		t.Fatal(out.Content)
	}
	if bs.env["TA"] != "alpha-value" || bs.redact["beta-value"] != "<redacted:TB>" || !bs.deadline.Equal(anchor.Add(4*time.Second)) || len(bs.secrets) != 2 {
		t.Fatalf("bound %+v", bs)
	}
	for _, tt := range []struct {
		name   string
		anchor time.Time
		now    time.Time
		env    map[string]string
		want   string
	}{
		{"expired", anchor, anchor.Add(4 * time.Second), env, "secret binding expired before execution: env:B"},
		{"never checked", time.Time{}, anchor, env, "secret binding expired before execution: env:A"},
		{"unset", anchor, anchor, map[string]string{"A": "x"}, "secret binding source is unavailable: env:B"},
	} {
		_, out := resolveBindings(b, tt.anchor, tt.now, func(k string) string { return tt.env[k] })
		if out == nil || out.Content != tt.want {
			t.Errorf("%s: %v, want %q", tt.name, out, tt.want)
		}
	}
}

func TestCommandExecutable(t *testing.T) {
	dir := t.TempDir()
	bin := dir + "/tool"
	if err := writeExecutable(bin); err != nil {
		t.Skip(err)
	}
	for _, tt := range []struct{ command, want string }{
		{"tool --x", bin},
		{"A=1 B=2 tool", bin},
		{"missing-tool", "/bin/sh"},
		{"./tool", bin},
		{"A=1", "/bin/sh"},
	} {
		if got := commandExecutable(tt.command, dir, "relative:"+dir, "/bin/sh"); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.command, got, tt.want)
		}
	}
}

func writeExecutable(p string) error { return os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755) }
