package mcp

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// minHTTPReadTimeout is the floor of the time a streamable HTTP server has
// to start answering a request (spec: max(timeout_seconds, 60)).
const minHTTPReadTimeout = 60 * time.Second

// httpTransport returns the streamable HTTP transport of d and the HTTP
// transport under it (its owner closes idle connections when done). Every
// connection goes through the Host URL policy: the host is resolved (with
// the policy's resolver) and judged only when each connection is opened,
// after the connect approval, only judged addresses are dialled, the
// socket's peer is checked before connect(2), no proxy is used, and every
// redirect target is judged before it is followed. The declared headers
// are sent only to the declared origin, never to a host a redirect leads
// to.
func (m *Manager) httpTransport(d Declaration, headers map[string]string) (*sdk.StreamableClientTransport, *http.Transport, error) {
	u, err := url.Parse(d.URL)
	if err != nil {
		return nil, nil, err
	}
	base := m.opts.URLPolicy.Transport()
	base.ResponseHeaderTimeout = max(d.CallTimeout, minHTTPReadTimeout)
	client := &http.Client{
		Transport:     &headerTransport{base: base, origin: origin(u), headers: headers},
		CheckRedirect: m.opts.URLPolicy.CheckRedirect,
	}
	return &sdk.StreamableClientTransport{Endpoint: d.URL, HTTPClient: client}, base, nil
}

// headerTransport adds the declared headers to requests for one origin.
type headerTransport struct {
	base    http.RoundTripper
	origin  string
	headers map[string]string
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) == 0 || origin(req.URL) != t.origin {
		return t.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	for k, v := range t.headers {
		if r.Header.Get(k) == "" { // the protocol's own headers win
			r.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(r)
}

// origin is scheme://host:port with the default port made explicit.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}
