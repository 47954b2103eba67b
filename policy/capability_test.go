package policy

import "testing"

func TestGrantsCan(t *testing.T) {
	g := NewGrants(
		[]string{"fs.read", "mcp.call:*", "agents.spawn:evolver", "tool.call:a:*", "secret.bind:*"},
		map[string][]string{"agent/output/x": {"fs.write"}},
	)
	tests := []struct {
		cap, path string
		want      bool
	}{
		{"fs.read", "", true},
		{"fs.write", "", false},
		{"fs.write", "agent/output/x", true},
		{"fs.write", "agent/output/y", false},
		{"mcp.call:docs", "", true},
		{"mcp.call", "", false},
		{"agents.spawn:evolver", "", true},
		{"agents.spawn:assistant", "", false},
		{"tool.call:a:b", "", true},
		{"tool.call:b", "", false},
		{"fs.*", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if got := g.Can(tt.cap, tt.path); got != tt.want {
			t.Errorf("Can(%q, %q)=%v, want %v", tt.cap, tt.path, got, tt.want)
		}
	}
	if g.CanExact("secret.bind:TOKEN") {
		t.Error("secret.bind:* must not grant an exact secret binding")
	}
	if !NewGrants([]string{"secret.bind:TOKEN"}, nil).CanExact("secret.bind:TOKEN") {
		t.Error("literal secret.bind grant must be exact")
	}
}

func TestBareStarGrantsNothing(t *testing.T) {
	g := NewGrants([]string{"*"}, nil)
	for _, c := range []string{"fs.read", "x:y", "*x"} {
		if g.Can(c, "") {
			t.Errorf("bare * granted %q", c)
		}
	}
}
