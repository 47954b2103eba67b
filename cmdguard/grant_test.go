package cmdguard

import (
	"strings"
	"testing"
)

// TestGrantCoversOnlyWhatTheOperatorSaw: a coarse session grant given for
// one command never covers a command naming a path outside the workspace
// or a sensitive file.
func TestGrantCoversOnlyWhatTheOperatorSaw(t *testing.T) {
	for granted, other := range map[string]string{
		"rm build.log": "rm -rf ../victim",
		"mkdir build":  "cp ../home/.ssh/id_rsa .",
		"cp a b":       "cp .env b",
		"touch x":      "touch ~/.bashrc",
		"cd build":     "cd /etc",
		"rm x":         "rm .git/config",
		"mv a b":       "mv a pyproject.toml",
	} {
		g, o := Review(granted), Review(other)
		if g.Exact {
			t.Errorf("%q should be coarse", granted)
		}
		if !o.Exact {
			t.Errorf("Review(%q) = %s %s, want Exact", other, o.Action, o.RuleKey)
		}
		if CacheKey(g, granted) == CacheKey(o, other) {
			t.Errorf("a grant for %q covers %q", granted, other)
		}
	}
}

func TestGrantCoverage(t *testing.T) {
	if got := Review("rm -rf /").GrantCoverage(); !strings.HasPrefix(got, "nothing") {
		t.Errorf("block coverage %q", got)
	}
	exactText := "this exact command, in this directory, with these options"
	for _, cmd := range []string{"frobnicate", "cat .env", "cat /etc/passwd", "ls && rm x", "ls | python x.py", "A=1 ls"} {
		if got := Review(cmd).GrantCoverage(); !strings.HasPrefix(got, exactText) {
			t.Errorf("Review(%q).GrantCoverage() = %q", cmd, got)
		}
	}
	// A verdict made Exact by hand (as a compound command is) is exact too.
	if got := (Verdict{Action: Prompt, RuleKey: "file-delete", Exact: true}).GrantCoverage(); !strings.HasPrefix(got, exactText) {
		t.Errorf("exact coverage %q", got)
	}
	coarse := Review("rm build.log").GrantCoverage()
	for _, part := range []string{"any single command", "file-delete", "deleting files inside the workspace",
		"no path outside the workspace and no sensitive file", "without an environment overlay or secret bindings"} {
		if !strings.Contains(coarse, part) {
			t.Errorf("coverage %q lacks %q", coarse, part)
		}
	}
	// Every coarse key any rule produces has its own sentence; an unknown
	// key still gets an accurate generic one.
	for _, r := range promptRules {
		v := Verdict{Action: Prompt, RuleKey: r.key}
		got := v.GrantCoverage()
		if fingerprintedKeys[r.key] {
			if !strings.HasPrefix(got, exactText) {
				t.Errorf("%s: %q", r.key, got)
			}
			continue
		}
		if _, ok := coarseCoverage[r.key]; !ok {
			t.Errorf("no coverage sentence for coarse key %s", r.key)
		}
		if !strings.Contains(got, "("+coarseCoverage[r.key]+")") {
			t.Errorf("%s: %q", r.key, got)
		}
	}
	if got := (Verdict{Action: Prompt, RuleKey: "new-key"}).GrantCoverage(); !strings.Contains(got, "(commands the guard classifies as new-key)") {
		t.Errorf("generic coverage %q", got)
	}
	if got := allowVerdict().GrantCoverage(); !strings.Contains(got, "literal read-only commands") {
		t.Errorf("allow coverage %q", got)
	}
}

// TestPathKeysAreFingerprinted: the two path keys are bound to the exact
// command even when a caller builds the verdict without Exact.
func TestPathKeysAreFingerprinted(t *testing.T) {
	for _, key := range []string{"sensitive-path", "path-outside-workspace"} {
		v := Verdict{Action: Prompt, RuleKey: key}
		if got := CacheKey(v, "cat x"); got != "terminal:terminal.exec:"+key+":"+Fingerprint("cat x", Execution{}) {
			t.Errorf("CacheKey = %q", got)
		}
	}
}
