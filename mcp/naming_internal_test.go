package mcp

import (
	"strings"
	"testing"
)

func TestPrefixes(t *testing.T) {
	n := newNamer()
	for _, tc := range []struct{ id, want string }{
		{"github", "github"},
		{"GitHub", "GitHub-2"}, // unique ignoring case
		{"my.server", "my-server"},
		{"9lives", "mcp-9lives"},
		{"_x", "mcp-_x"},
		{"ünï", "mcp--n-"},
		{strings.Repeat("a", 40), strings.Repeat("a", 30)},
		{strings.Repeat("a", 35), strings.Repeat("a", 28) + "-2"},
		{strings.Repeat("a", 31), strings.Repeat("a", 28) + "-3"},
	} {
		if got := n.prefix(tc.id); got != tc.want {
			t.Errorf("prefix(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
}

func TestToolNames(t *testing.T) {
	n := newNamer()
	p := n.prefix("srv")
	long := strings.Repeat("long", 20)
	for _, tc := range []struct{ raw, want string }{
		{"search", "srv__search"},
		{"a.b", "srv__a-b"},
		{"a-b", "srv__a-b-2"},
		{"A-B", "srv__A-B-3"},
		{"9lives", "srv__tool-9lives"},
		{"", "srv__tool"},
		{long, "srv__" + long[:59]},
		{long + "x", "srv__" + long[:57] + "-2"},
	} {
		got := n.tool(p, tc.raw)
		if got != tc.want {
			t.Errorf("tool(%q) = %q, want %q", tc.raw, got, tc.want)
		}
		if len(got) > MaxToolNameLen {
			t.Errorf("tool(%q) = %q is longer than %d", tc.raw, got, MaxToolNameLen)
		}
	}
	// A 30-character prefix leaves 32 characters for the tool.
	q := n.prefix(strings.Repeat("p", 30))
	if got := n.tool(q, long); len(got) != MaxToolNameLen || !strings.HasPrefix(got, q+"__long") {
		t.Errorf("long prefix: %q (%d)", got, len(got))
	}
}

func TestMatchPattern(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"search", "search", true},
		{"search", "Search", false},
		{"search", "search2", false},
		{"*", "", true},
		{"*", "anything", true},
		{"get_*", "get_issue", true},
		{"get_*", "get_", true},
		{"get_*", "set_issue", false},
		{"*_admin", "delete_admin", true},
		{"*_admin", "admin", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "acb", false},
		{"a*a", "a", false},
		{"a?c", "abc", false},
		{"a?c", "a?c", true},
		{"[ab]", "a", false},
	} {
		if got := matchPattern(tc.pattern, tc.name); got != tc.want {
			t.Errorf("matchPattern(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

func TestAllowedTool(t *testing.T) {
	for _, tc := range []struct {
		name             string
		include, exclude []string
		want             bool
	}{
		{"x", nil, nil, true},
		{"x", []string{"y"}, nil, false},
		{"x", []string{"y", "x*"}, nil, true},
		{"x", nil, []string{"x"}, false},
		{"x_admin", []string{"x*"}, []string{"*_admin"}, false},
	} {
		if got := allowedTool(tc.name, tc.include, tc.exclude); got != tc.want {
			t.Errorf("allowedTool(%q, %q, %q) = %v", tc.name, tc.include, tc.exclude, got)
		}
	}
}

func TestInterpolate(t *testing.T) {
	env := map[string]string{"A": "1", "TOKEN": "s3cr3t"}
	get := func(k string) string { return env[k] }
	for _, tc := range []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"Bearer ${TOKEN}", "Bearer s3cr3t", ""},
		{"${A}${A}-$A-${", "11-$A-${", ""},
		{"${MISSING} and ${A}", "", "missing environment variable: MISSING"},
	} {
		got, err := interpolate(tc.in, get)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("interpolate(%q) err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("interpolate(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
