package slash_test

import (
	"context"
	"slices"
	"testing"

	"github.com/demiurge/demiurge/internal/tui/slash"
)

func TestCompleteWithoutHost(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"/he", []string{"/help"}},
		{"/s", []string{"/status", "/skills ", "/skill ", "/sessions ", "/subagents ", "/stop"}},
		{"/sk", []string{"/skills ", "/skill "}},
		{"/TOOL", []string{"/tools", "/tool-display "}},
		{"/tool-display", []string{"/tool-display "}},
		{"/tool-display ", []string{"/tool-display quiet", "/tool-display summary", "/tool-display full"}},
		{"/tool-display s", []string{"/tool-display summary"}},
		{"/tool-display summary", nil},
		{"/busy q", []string{"/busy queue"}},
		{"/busy ", []string{"/busy interrupt", "/busy queue"}},
		{"/trace l", []string{"/trace last"}},
		{"/evolve p", []string{"/evolve promote"}},
		{"/rollback ", []string{"/rollback previous"}},
		{"/subagents c", []string{"/subagents cancel"}},
		{"/resume ", nil}, // session ids need the Host
		{"/zz", nil},
		{"/zz a", nil},
		{"/busy queue x", nil},
		{"help", nil},
	} {
		if got := slash.Complete(context.Background(), nil, c.in); !slices.Equal(got, c.want) {
			t.Errorf("Complete(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := slash.Complete(context.Background(), nil, "/"); len(got) != len(slash.Specs()) {
		t.Errorf(`Complete("/") = %d names, want the whole catalog`, len(got))
	}
}

func TestSuggest(t *testing.T) {
	names := func(specs []slash.Spec) []string {
		var out []string
		for _, s := range specs {
			out = append(out, s.Name)
		}
		return out
	}
	for _, c := range []struct {
		token string
		want  []string
	}{
		{"", []string{"help", "status", "core", "versions", "provider", "doctor", "tools", "skills"}},
		{"/skill", []string{"skill", "skills"}},                                  // exact before prefix
		{"/ver", []string{"versions"}},                                           // prefix
		{"/play", []string{"tool-display"}},                                      // substring
		{"revision", []string{"versions"}},                                       // description
		{"/sess", []string{"sessions", "subagents", "resume", "new", "compact"}}, // prefix, then usage or description
		{"/xyz", nil},
	} {
		if got := names(slash.Suggest(c.token)); !slices.Equal(got, c.want) {
			t.Errorf("Suggest(%q) = %v, want %v", c.token, got, c.want)
		}
	}
}
