package cmdguard

import (
	"regexp"
	"strings"
	"testing"
)

var fp16Re = regexp.MustCompile(`^[0-9a-f]{16}$`)

func TestCacheKey(t *testing.T) {
	tests := []struct {
		cmd  string
		want string // key, "<fp>" standing for the command's fingerprint
	}{
		{"rm -rf build", "terminal:terminal.exec:file-delete"},
		{"go test ./...", "terminal:terminal.exec:project-code-execution"},
		{"npm install", "terminal:terminal.exec:dependency-change"},
		{"ls", "terminal:terminal.exec:safe-command"},
		{"frobnicate", "terminal:terminal.exec:unknown-command:<fp>"},
		{"ls | python x.py", "terminal:terminal.exec:pipeline:<fp>"},
		{"printf x > out", "terminal:terminal.exec:shell-redirection:<fp>"},
		{"echo $(date)", "terminal:terminal.exec:command-substitution:<fp>"},
		{"bash -c 'ls'", "terminal:terminal.exec:shell-eval:<fp>"},
		{"python -c 1", "terminal:terminal.exec:script-eval:<fp>"},
		{"ls || pwd", "terminal:terminal.exec:complex-shell:<fp>"},
		// Beyond the spec's list: a glob or an inline overlay can stand for anything.
		{"cat *.go", "terminal:terminal.exec:filename-expansion:<fp>"},
		{"LD_PRELOAD=x.so ls", "terminal:terminal.exec:environment-overlay:<fp>"},
		// A compound command's key names only its first risky segment.
		{"mkdir out && curl -o out/x https://example.com", "terminal:terminal.exec:file-write:<fp>"},
	}
	for _, tt := range tests {
		v := Review(tt.cmd)
		want := strings.ReplaceAll(tt.want, "<fp>", Fingerprint(tt.cmd, Execution{}))
		if got := CacheKey(v, tt.cmd); got != want {
			t.Errorf("CacheKey(%q) = %q, want %q", tt.cmd, got, want)
		}
	}
}

func TestCacheKeyForOverlayAndBindings(t *testing.T) {
	cmd := "rm -rf build"
	v := Review(cmd)
	plain := CacheKeyFor(v, cmd, Execution{Cwd: "."})
	if plain != "terminal:terminal.exec:file-delete" {
		t.Fatalf("coarse key = %q", plain)
	}
	withEnv := CacheKeyFor(v, cmd, Execution{Cwd: ".", Env: map[string]string{"A": "1"}})
	if !strings.HasPrefix(withEnv, "terminal:terminal.exec:file-delete:") || !fp16Re.MatchString(withEnv[len("terminal:terminal.exec:file-delete:"):]) {
		t.Fatalf("overlay key = %q, want fingerprinted", withEnv)
	}
	withBinding := CacheKeyFor(v, cmd, Execution{SecretBindings: []BindingAudit{{Source: "env:TOKEN", Target: "TOKEN"}}})
	if withBinding == plain || withBinding == withEnv {
		t.Fatalf("binding key = %q, want its own fingerprint", withBinding)
	}
}

func TestFingerprint(t *testing.T) {
	base := Execution{Cwd: "src", Env: map[string]string{"B": "2", "A": "1"}, TimeoutSeconds: 30}
	fp := Fingerprint("make test", base)
	if !fp16Re.MatchString(fp) {
		t.Fatalf("Fingerprint = %q, want 16 hex digits", fp)
	}
	// Map order never matters.
	for range 20 {
		if got := Fingerprint("make test", Execution{Cwd: "src", Env: map[string]string{"A": "1", "B": "2"}, TimeoutSeconds: 30}); got != fp {
			t.Fatalf("Fingerprint not deterministic: %q vs %q", got, fp)
		}
	}
	variants := map[string]Execution{
		"cwd":        {Cwd: "other", Env: base.Env, TimeoutSeconds: 30},
		"env value":  {Cwd: "src", Env: map[string]string{"A": "1", "B": "3"}, TimeoutSeconds: 30},
		"timeout":    {Cwd: "src", Env: base.Env, TimeoutSeconds: 31},
		"background": {Cwd: "src", Env: base.Env, TimeoutSeconds: 30, Background: true},
		"bindings":   {Cwd: "src", Env: base.Env, TimeoutSeconds: 30, SecretBindings: []BindingAudit{{Source: "env:X", Target: "X"}}},
	}
	for name, x := range variants {
		if Fingerprint("make test", x) == fp {
			t.Errorf("changing %s kept the fingerprint", name)
		}
	}
	if Fingerprint("make test ", base) == fp {
		t.Error("changing the command kept the fingerprint")
	}
	// Invalid UTF-8 must not collapse distinct commands.
	if Fingerprint("rm \xff", Execution{}) == Fingerprint("rm \xfe", Execution{}) {
		t.Error("distinct invalid UTF-8 commands share a fingerprint")
	}
}
