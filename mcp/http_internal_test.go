package mcp

import (
	"net/http"
	"net/url"
	"testing"
)

type recordRT struct{ got http.Header }

func (r *recordRT) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = req.Header.Clone()
	return &http.Response{StatusCode: 204, Body: http.NoBody, Request: req}, nil
}

func TestHeadersGoToTheDeclaredOriginOnly(t *testing.T) {
	rec := &recordRT{}
	u, _ := url.Parse("https://mcp.example.com/mcp")
	ht := &headerTransport{base: rec, origin: origin(u), headers: map[string]string{"Authorization": "Bearer t", "Mcp-Session-Id": "forged"}}
	for _, tc := range []struct {
		url  string
		want string
	}{
		{"https://mcp.example.com/mcp", "Bearer t"},
		{"https://MCP.example.com:443/other", "Bearer t"},
		{"http://mcp.example.com/mcp", ""},
		{"https://mcp.example.com:8443/mcp", ""},
		{"https://evil.example.net/mcp", ""},
	} {
		req, _ := http.NewRequest(http.MethodPost, tc.url, nil)
		req.Header.Set("Mcp-Session-Id", "real")
		if _, err := ht.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		if got := rec.got.Get("Authorization"); got != tc.want {
			t.Errorf("%s: Authorization %q, want %q", tc.url, got, tc.want)
		}
		if got := rec.got.Get("Mcp-Session-Id"); got != "real" {
			t.Errorf("%s: a declared header replaced the protocol's: %q", tc.url, got)
		}
		if req.Header.Get("Authorization") != "" {
			t.Errorf("%s: the caller's request was modified", tc.url)
		}
	}
}
