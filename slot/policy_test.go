package slot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/demiurge/demiurge"
)

func TestHistoryRuleResolve(t *testing.T) {
	serial := historyRule{phaseDefault: demiurge.HistoryPersist, allowWrite: true}
	input := historyRule{phaseDefault: demiurge.HistoryTransient, allowWrite: true}
	parallel := historyRule{phaseDefault: demiurge.HistoryTransient, allowWrite: false}
	withDefault := func(r historyRule, d string) historyRule { r.slotDefault = d; return r }
	set := func(s string) optString { return optString{set: true, val: s} }
	yes, no := optBool{set: true, val: true}, optBool{set: true, val: false}

	tests := []struct {
		name     string
		rule     historyRule
		explicit optString
		write    optBool
		visible  bool
		want     string
		err      string
	}{
		{"serial output default", serial, optString{}, optBool{}, true, demiurge.HistoryPersist, ""},
		{"input default", input, optString{}, optBool{}, true, demiurge.HistoryTransient, ""},
		{"parallel default", parallel, optString{}, optBool{}, true, demiurge.HistoryTransient, ""},
		{"explicit wins over write_history", serial, set(demiurge.HistoryModelHidden), no, true, demiurge.HistoryModelHidden, ""},
		{"write_history true", input, optString{}, yes, true, demiurge.HistoryPersist, ""},
		{"write_history false", serial, optString{}, no, true, demiurge.HistoryTransient, ""},
		{"write_history wins over slot default", withDefault(serial, demiurge.HistoryModelHidden), optString{}, yes, true, demiurge.HistoryPersist, ""},
		{"slot default over phase default", withDefault(input, demiurge.HistoryModelHidden), optString{}, optBool{}, true, demiurge.HistoryModelHidden, ""},
		{"slot transient default in serial output", withDefault(serial, demiurge.HistoryTransient), optString{}, optBool{}, true, demiurge.HistoryTransient, ""},
		{"parallel ignores writing slot default", withDefault(parallel, demiurge.HistoryPersist), optString{}, optBool{}, true, demiurge.HistoryTransient, ""},
		{"invalid explicit", serial, set("forever"), optBool{}, true, "", "invalid history policy: forever"},
		{"invalid checked before parallel", parallel, set("forever"), optBool{}, true, "", "invalid history policy: forever"},
		{"parallel explicit write", parallel, set(demiurge.HistoryModelHidden), optBool{}, true, "", "parallel output modules cannot write session history"},
		{"parallel write_history", parallel, optString{}, yes, true, "", "parallel output modules cannot write session history"},
		{"invisible transient", serial, optString{}, no, false, "", "send with visible=False and write_history=False has no effect"},
		{"invisible explicit transient", serial, set(demiurge.HistoryTransient), optBool{}, false, "", "send with visible=False and write_history=False has no effect"},
		{"invisible persisted is fine", serial, optString{}, optBool{}, false, demiurge.HistoryPersist, ""},
		{"invisible parallel default", parallel, optString{}, optBool{}, false, "", "send with visible=False and write_history=False has no effect"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.rule.resolve(tt.explicit, tt.write, tt.visible)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err=%v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("resolve=%q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestContainedPath(t *testing.T) {
	ws := t.TempDir()
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name      string
		p         string
		ws, root  string
		want      string
		contained bool
	}{
		{"relative", "a.png", ws, root, filepath.Join(ws, "a.png"), true},
		{"nested new file", "sub/new/b.png", ws, root, filepath.Join(ws, "sub/new/b.png"), true},
		{"absolute inside", filepath.Join(ws, "sub"), ws, root, filepath.Join(ws, "sub"), true},
		{"session root", filepath.Join(root, "c.mp3"), ws, root, filepath.Join(root, "c.mp3"), true},
		{"the root itself", ws, ws, root, ws, true},
		{"dot-dot", "../x", ws, root, "", false},
		{"dot-dot inside then out", "sub/../../x", ws, root, "", false},
		{"absolute outside", "/etc/passwd", ws, root, "", false},
		{"prefix sibling", ws + "-other/x", ws, root, "", false},
		{"symlink escape", "escape/secret", ws, root, "", false},
		{"symlink escape to new file", "escape/new", ws, root, "", false},
		{"no roots", "a.png", "", "", "", false},
		{"relative without workspace", "a.png", "", root, "", false},
		{"empty", "", ws, root, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := containedPath(tt.p, tt.ws, tt.root)
			if ok != tt.contained || got != tt.want {
				t.Fatalf("containedPath(%q)=%q,%v; want %q,%v", tt.p, got, ok, tt.want, tt.contained)
			}
		})
	}
}

func TestIsURL(t *testing.T) {
	for s, want := range map[string]bool{
		"https://example.com/a.png": true,
		"HTTP://example.com":        true,
		"ftp://example.com/x":       false,
		"https:///nohost":           false,
		"file:///etc/passwd":        false,
		"a.png":                     false,
		"//example.com/x":           false,
	} {
		if got := isURL(s); got != want {
			t.Errorf("isURL(%q)=%v, want %v", s, got, want)
		}
	}
}
