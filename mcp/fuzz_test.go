package mcp

import (
	"strings"
	"testing"
)

// FuzzParseDeclaration: any file either decodes into a declaration whose
// required fields hold, or fails with an "invalid MCP server" error; it
// never panics.
func FuzzParseDeclaration(f *testing.F) {
	for _, seed := range []string{
		"command: npx\nargs: [-y, pkg]\nenv: {A: \"${B}\"}\n",
		"transport: streamable_http\nurl: https://h/mcp\nheaders: {X: y}\n",
		"enabled: false\ntools: {include: [a*], exclude: [\"*b\"]}\n",
		"command: a\nconnect_timeout_seconds: 1e308\n",
		"command: [a]\n",
		"&a x: *a\n",
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		d, err := ParseDeclaration("srv", "/srv.yaml", "srv.yaml", []byte(body))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "invalid MCP server srv.yaml: ") {
				t.Fatalf("error %q lacks the prefix", err)
			}
			return
		}
		switch d.Transport {
		case TransportStdio:
			if d.Command == "" {
				t.Fatal("stdio declaration without command")
			}
		case TransportStreamableHTTP:
			if !strings.HasPrefix(d.URL, "http://") && !strings.HasPrefix(d.URL, "https://") {
				t.Fatalf("url %q accepted", d.URL)
			}
		default:
			t.Fatalf("transport %q accepted", d.Transport)
		}
		if d.ConnectTimeout <= 0 || d.CallTimeout <= 0 || len(d.Fingerprint) != 64 {
			t.Fatalf("bad defaults: %+v", d)
		}
	})
}

// FuzzNames: names are ASCII [A-Za-z0-9_-], start with a letter, fit the
// limits and never repeat ignoring case.
func FuzzNames(f *testing.F) {
	f.Add("github", "search", "Search")
	f.Add("", "", "")
	f.Add("9x.y", "ü.ö", strings.Repeat("z", 90))
	f.Fuzz(func(t *testing.T, server, a, b string) {
		n := newNamer()
		p1, p2 := n.prefix(server), n.prefix(server)
		if strings.EqualFold(p1, p2) || len(p1) > maxPrefixLen || len(p2) > maxPrefixLen {
			t.Fatalf("prefixes %q %q", p1, p2)
		}
		seen := map[string]bool{}
		for _, raw := range []string{a, b, a, b} {
			name := n.tool(p1, raw)
			if len(name) > MaxToolNameLen || seen[strings.ToLower(name)] || !isLetter(name[0]) {
				t.Fatalf("name %q (from %q)", name, raw)
			}
			for i := 0; i < len(name); i++ {
				if !isNameByte(name[i]) {
					t.Fatalf("name %q has byte %q", name, name[i])
				}
			}
			seen[strings.ToLower(name)] = true
		}
	})
}

// FuzzMatchPattern: a pattern without '*' matches only itself, and "*"
// matches everything.
func FuzzMatchPattern(f *testing.F) {
	f.Add("a*b", "axb")
	f.Add("*", "")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		got := matchPattern(pattern, name)
		if !strings.Contains(pattern, "*") && got != (pattern == name) {
			t.Fatalf("matchPattern(%q, %q) = %v", pattern, name, got)
		}
		if matchPattern("*", name) != true || !matchPattern(name, name) && !strings.Contains(name, "*") {
			t.Fatalf("basic laws broken for %q", name)
		}
	})
}
