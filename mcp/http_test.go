package mcp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/testutil"
	"github.com/demiurge/demiurge/mcp"
	"github.com/demiurge/demiurge/mcp/internal/testserver"
	"github.com/demiurge/demiurge/urlpolicy"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// loopback admits the test servers on 127.0.0.0/8 and nothing else private.
var loopback = urlpolicy.Policy{AllowPrivatePrefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}

// httpServer serves the test server over streamable HTTP on loopback and
// records the Authorization headers it receives.
type httpServer struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
}

func newHTTPServer(t *testing.T, cfg testserver.Config) *httpServer {
	t.Helper()
	srv := testserver.New(cfg)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	s := &httpServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.auths = append(s.auths, r.Header.Get("Authorization"))
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *httpServer) authorizations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auths...)
}

func TestStreamableHTTPServer(t *testing.T) {
	srv := newHTTPServer(t, testserver.Config{})
	e := newEnv(t, func(o *mcp.Options) {
		o.URLPolicy = loopback
		o.Getenv = func(k string) string {
			if k == "HTTP_TOKEN" {
				return "http-token-value-321"
			}
			return ""
		}
	})
	d := e.decl("remote", "transport: streamable_http\nurl: "+srv.URL+"/mcp\napproval_policy: auto\nheaders:\n  Authorization: \"Bearer ${HTTP_TOKEN}\"\n")
	g := newGate()
	tc := e.turn(sessionID(), "mcp.connect:remote", "mcp.call:remote", "secret.bind:HTTP_TOKEN")
	ctx := context.Background()
	defs, sts := e.prepare(ctx, tc, g.fn, d)
	if st := status(t, sts, "remote"); st.State != mcp.StateConnected || !hasName(defs, "remote__echo") {
		t.Fatalf("status %+v", st)
	}
	preview := g.last["remote"].Preview
	if preview["url"] != srv.URL || strings.Join(anyStrings(preview["header_names"]), ",") != "Authorization" {
		t.Fatalf("connect preview: %v", preview)
	}
	if res := call(t, ctx, tc, defs, "remote__echo", map[string]any{"text": "over http"}); res.ModelView != "echo: over http" {
		t.Fatalf("echo: %+v", res)
	}
	for _, a := range srv.authorizations() {
		if a != "Bearer http-token-value-321" {
			t.Fatalf("Authorization header %q", a)
		}
	}

	// Call timeout over HTTP.
	d2 := e.decl("remote", string(d.Raw)+"timeout_seconds: 0.3\n")
	defs, _ = e.prepare(ctx, tc, g.fn, d2)
	start := time.Now()
	res := call(t, ctx, tc, defs, "remote__sleep", map[string]any{"ms": 10000})
	if time.Since(start) > 3*time.Second || res.ModelView != "MCP tool failed: MCP call timed out after 0.3s" {
		t.Fatalf("timeout: %s %+v", time.Since(start), res)
	}

	// tools/list_changed arrives on the standalone stream.
	if r := call(t, ctx, tc, defs, "remote__add_tool", map[string]any{"name": "late"}); r.Status != demiurge.EffectSucceeded {
		t.Fatalf("add_tool: %+v", r)
	}
	eventually(t, 5*time.Second, "the new tool over HTTP", func() bool {
		defs, _ = e.prepare(ctx, tc, g.fn, d2)
		return hasName(defs, "remote__late")
	})
}

func TestHTTPPrivateURLRefused(t *testing.T) {
	srv := newHTTPServer(t, testserver.Config{})
	e := newEnv(t) // the strict default policy
	d := e.decl("remote", "transport: streamable_http\nurl: "+srv.URL+"/mcp\n")
	g := newGate()
	_, sts := e.prepare(context.Background(), e.turn(sessionID(), "mcp.connect:remote"), g.fn, d)
	if st := status(t, sts, "remote"); st.State != mcp.StateDenied || st.Error != "URL blocked by Host policy: private_address" {
		t.Fatalf("status %+v", st)
	}
	if g.count("remote") != 0 || len(srv.authorizations()) != 0 {
		t.Fatal("a refused URL was approved or reached")
	}
}

// TestHTTPNoLookupBeforeApproval: a streamable HTTP server named by a host
// name is not looked up before its connect approval. Denied, the name is
// never resolved; approved, it is resolved when the transport connects,
// and a private answer is refused there.
func TestHTTPNoLookupBeforeApproval(t *testing.T) {
	srv := newHTTPServer(t, testserver.Config{})
	u, _ := url.Parse(srv.URL)
	// A server that accepts a Host header other than localhost, for the
	// name that connects (closed after the manager, which holds its
	// standalone stream).
	lenient := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return testserver.New(testserver.Config{}) },
		&sdk.StreamableHTTPOptions{DisableLocalhostProtection: true}))
	t.Cleanup(lenient.Close)
	lu, _ := url.Parse(lenient.URL)
	dns := testutil.NewResolver(map[string]string{"mcp.exfil.test": "10.0.0.9", "named.test": "127.0.0.1"})
	e := newEnv(t, func(o *mcp.Options) {
		o.URLPolicy = urlpolicy.Policy{AllowPrivatePrefixes: loopback.AllowPrivatePrefixes, Resolver: dns}
	})
	d := e.decl("remote", "transport: streamable_http\nurl: http://mcp.exfil.test:"+u.Port()+"/mcp\nconnect_timeout_seconds: 5\n")
	ctx := context.Background()

	deny := newGate("remote")
	_, sts := e.prepare(ctx, e.turn(sessionID(), "mcp.connect:remote"), deny.fn, d)
	if st := status(t, sts, "remote"); st.State != mcp.StateDenied || deny.count("remote") != 1 {
		t.Fatalf("denied: %+v (asked %d)", st, deny.count("remote"))
	}
	if got := dns.Lookups(); len(got) != 0 {
		t.Fatalf("lookups %v before approval", got)
	}

	_, sts = e.prepare(ctx, e.turn(sessionID(), "mcp.connect:remote"), newGate().fn, d)
	if st := status(t, sts, "remote"); st.State != mcp.StateFailed || !strings.Contains(st.Error, "URL blocked by Host policy: private_address") {
		t.Fatalf("approved: %+v", st)
	}
	if got := dns.Lookups(); len(got) == 0 || got[0] != "mcp.exfil.test" || len(srv.authorizations()) != 0 {
		t.Fatalf("lookups %v, requests %d; want the lookup at connect and no request", got, len(srv.authorizations()))
	}

	// A name that resolves to an admitted address connects.
	named := e.decl("named", "transport: streamable_http\nurl: http://named.test:"+lu.Port()+"/mcp\n")
	defs, sts := e.prepare(ctx, e.turn(sessionID(), "mcp.connect:named"), newGate().fn, named)
	if st := status(t, sts, "named"); st.State != mcp.StateConnected || !hasName(defs, "named__echo") {
		t.Fatalf("named: %+v", st)
	}
}

func TestHTTPRedirectIsJudged(t *testing.T) {
	target := newHTTPServer(t, testserver.Config{})
	// The redirect names the same server by "localhost", which the policy
	// refuses (only 127.0.0.0/8 addresses are admitted, not the name).
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.Replace(target.URL, "127.0.0.1", "localhost", 1)+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	e := newEnv(t, func(o *mcp.Options) { o.URLPolicy = loopback })
	d := e.decl("remote", "transport: streamable_http\nurl: "+redirector.URL+"/mcp\nconnect_timeout_seconds: 5\n")
	_, sts := e.prepare(context.Background(), e.turn(sessionID(), "mcp.connect:remote"), newGate().fn, d)
	if st := status(t, sts, "remote"); st.State != mcp.StateFailed || !strings.Contains(st.Error, "URL blocked by Host policy: private_hostname") {
		t.Fatalf("status %+v", st)
	}
	if len(target.authorizations()) != 0 {
		t.Fatal("the redirect was followed")
	}
}

func TestHTTPHangTimesOut(t *testing.T) {
	stop := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // lets the server notice the client leaving
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(stop) })
	srv := newHTTPServer(t, testserver.Config{})
	e := newEnv(t, func(o *mcp.Options) { o.URLPolicy = loopback })
	slow := e.decl("slow", "transport: streamable_http\nurl: "+hang.URL+"/mcp\nconnect_timeout_seconds: 0.5\n")
	ok := e.decl("ok", "transport: streamable_http\nurl: "+srv.URL+"/mcp\n")
	start := time.Now()
	defs, sts := e.prepare(context.Background(), e.turn(sessionID(), "mcp.connect:*"), newGate().fn, slow, ok)
	// The bound catches a discovery that ignores its 0.5 s timeout and waits
	// for the default one (30 s) or for ever; it leaves a loaded -race run
	// plenty of room.
	if took := time.Since(start); took > mcp.DefaultConnectTimeout/2 {
		t.Fatalf("took %s: the 0.5 s connect timeout did not bound discovery", took)
	}
	if st := status(t, sts, "slow"); st.State != mcp.StateFailed || st.Error != "MCP discovery timed out after 0.5s" {
		t.Fatalf("slow: %+v", st)
	}
	if !hasName(defs, "ok__echo") {
		t.Fatalf("healthy peer: %v", names(defs))
	}
}

func anyStrings(v any) []string {
	s, _ := v.([]string)
	return s
}
