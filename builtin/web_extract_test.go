package builtin_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/internal/testutil"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/urlpolicy"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
)

var loopbackOnly = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// site is a loopback HTTP server that counts requests and records the
// last request's headers.
type site struct {
	*httptest.Server
	hits atomic.Int32
	mu   sync.Mutex
	last *http.Request
}

func newSite(t *testing.T, h http.HandlerFunc) *site {
	t.Helper()
	s := &site{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.mu.Lock()
		s.last = r.Clone(context.Background())
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// serve answers every request with body and content type ct.
func serve(ct string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		w.Write(body)
	}
}

func (s *site) port() string {
	u, _ := url.Parse(s.URL)
	return u.Port()
}

// fixedDNS answers from a table and fails on unknown names: no test sends
// real DNS queries.
type fixedDNS map[string]string

func (f fixedDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	a, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []net.IPAddr{{IP: net.IP(netip.MustParseAddr(a).AsSlice())}}, nil
}

// recordingApprover answers every prompt with decision and keeps the
// requests.
type recordingApprover struct {
	decision string
	mu       sync.Mutex
	asked    []effect.ApprovalRequest
}

func (a *recordingApprover) Approve(_ context.Context, req effect.ApprovalRequest) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req)
	return a.decision, nil
}

func (a *recordingApprover) requests() []effect.ApprovalRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]effect.ApprovalRequest(nil), a.asked...)
}

// webTool is web_extract bound to a policy, callable directly (the
// adapter after approval) or through the real dispatcher.
type webTool struct {
	t   *testing.T
	def effect.Definition
	cat *effect.Catalog
	tc  effect.TurnContext
}

func newWebTool(t *testing.T, p urlpolicy.Policy, approver effect.Approver) *webTool {
	t.Helper()
	defs := builtin.Definitions([]string{"coding"}, builtin.Deps{URLPolicy: p})
	cat, err := effect.NewCatalog("demo", "rev", defs)
	if err != nil {
		t.Fatal(err)
	}
	w := &webTool{t: t, cat: cat, tc: effect.TurnContext{
		SessionID: "session_1", TurnID: "turn_1", CoreID: "demo", CoreRevision: "rev",
		Scope: demiurge.OperatorScope("session_1"), Grants: policy.NewGrants([]string{"network.fetch"}, nil),
		Approver: approver,
	}}
	for _, d := range defs {
		if d.Name == "web_extract" {
			w.def = d
		}
	}
	if w.def.Adapter == nil {
		t.Fatal("web_extract is not in the coding toolset")
	}
	return w
}

// invoke runs the adapter as the dispatcher does once approval passed.
func (w *webTool) invoke(args map[string]any) effect.Outcome {
	w.t.Helper()
	out, err := prepareAndRun(context.Background(), w.def.Adapter, effect.Invocation{CallID: "call_1", Args: jsonArgs(w.t, args), Catalog: w.cat, Turn: w.tc})
	if err != nil {
		w.t.Fatalf("adapter error: %v", err)
	}
	return out
}

// dispatch runs the call through the effect runtime: schema, capability,
// precheck, approval, adapter.
func (w *webTool) dispatch(args map[string]any) demiurge.EffectResult {
	w.t.Helper()
	req, ok := w.cat.Bind(demiurge.ToolCall{ID: "call_1", Name: "web_extract", Arguments: jsonArgs(w.t, args)}, demiurge.OriginModel)
	if !ok {
		w.t.Fatal("web_extract not bound")
	}
	rt := effect.NewRuntime(effect.Options{Approvals: effect.NewApprovalRuntime(effect.ApprovalOptions{})})
	return rt.Execute(context.Background(), w.cat, req, w.tc)
}

func TestWebExtractHTML(t *testing.T) {
	page := `<!DOCTYPE html><html><head><title>  Demo &amp; Page </title>` +
		`<style>body { color: red }</style><script>var hidden = "script text";</script></head>` +
		`<body><h1>Heading</h1><p>First   paragraph` + "\n" + `with <b>bold</b> text.</p>` +
		`<ul><li>one</li><li>two</li></ul>` + "\n" + `<pre>line 1` + "\n" + `  line 2</pre>` +
		`<noscript>enable scripts</noscript><svg><title>icon</title><text>drawn</text></svg>` +
		`<table><tr><td>a</td><td>b</td></tr></table><p>caf&eacute;&nbsp;&lt;tag&gt;</p></body></html>`
	srv := newSite(t, serve("text/html; charset=utf-8", []byte(page)))
	w := newWebTool(t, urlpolicy.Policy{AllowPrivate: true}, nil)
	out := w.invoke(map[string]any{"url": srv.URL + "/doc?x=1"})
	wantOK(t, out)
	want := "Demo & Page\n\nHeading\n\nFirst paragraph with bold text.\n\n- one\n- two\n\nline 1\n  line 2\n\na b\n\ncafé <tag>"
	if out.Content != want {
		t.Fatalf("content:\n%q\nwant:\n%q", out.Content, want)
	}
	target := "http://127.0.0.1:" + srv.port()
	for k, v := range map[string]any{"url": target, "status": 200, "content_type": "text/html; charset=utf-8", "truncated": false, "title": "Demo & Page", "charset": "utf-8"} {
		if out.Data[k] != v {
			t.Errorf("data[%s]=%v, want %v", k, out.Data[k], v)
		}
	}
	audit, _ := out.Data["url_policy"].(map[string]any)
	if audit["target"] != target || audit["allowed"] != true {
		t.Errorf("url_policy=%v", audit)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.last.Method != http.MethodGet || srv.last.Header.Get("User-Agent") != "demiurge/0.1" || srv.last.URL.RequestURI() != "/doc?x=1" {
		t.Fatalf("request %s %s UA=%q", srv.last.Method, srv.last.URL, srv.last.Header.Get("User-Agent"))
	}
}

func TestWebExtractCharsets(t *testing.T) {
	sjis := func(s string) []byte {
		b, err := japanese.ShiftJIS.NewEncoder().Bytes([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	latin1 := func(s string) []byte {
		b, err := charmap.ISO8859_1.NewEncoder().Bytes([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name, ct string
		body     []byte
		want     string
		charset  string
	}{
		{"latin-1 header", "text/html; charset=ISO-8859-1", latin1("<p>café crème</p>"), "café crème", "windows-1252"},
		{"latin-1 plain", "text/plain; charset=latin1", latin1("naïve façade"), "naïve façade", "windows-1252"},
		{"shift_jis header", "text/html; charset=Shift_JIS", sjis("<p>日本語のテキスト</p>"), "日本語のテキスト", "shift_jis"},
		{"shift_jis meta", "text/html", cat([]byte(`<html><head><meta charset="shift_jis"></head><body>`), sjis("こんにちは世界"), []byte("</body></html>")), "こんにちは世界", "shift_jis"},
		{"http-equiv meta", "text/html", cat([]byte(`<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"><p>`), latin1("déjà vu")), "déjà vu", "windows-1252"},
		{"header beats meta", "text/html; charset=utf-8", []byte(`<meta charset="shift_jis"><p>ünïcode</p>`), "ünïcode", "utf-8"},
		{"utf-8 bom", "text/plain", append([]byte{0xEF, 0xBB, 0xBF}, "bom text"...), "bom text", "utf-8"},
		{"utf-16 bom", "text/plain", []byte{0xFF, 0xFE, 'h', 0, 'i', 0}, "hi", "utf-16le"},
		{"invalid utf-8", "text/plain; charset=utf-8", []byte("ok \xff\xfe end"), "ok \ufffd\ufffd end", "utf-8"},
		{"unknown charset", "text/plain; charset=x-bogus", []byte("plain"), "plain", "utf-8"},
		{"untyped html sniffed", "", []byte("<!DOCTYPE html><p>sniffed <b>html</b></p>"), "sniffed html", "utf-8"},
		{"json stays text", "application/json", []byte(`{"a": "<b>x</b>"}`), `{"a": "<b>x</b>"}`, "utf-8"},
	}
	w := newWebTool(t, urlpolicy.Policy{AllowPrivatePrefixes: loopbackOnly}, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newSite(t, serve(tt.ct, tt.body))
			out := w.invoke(map[string]any{"url": srv.URL})
			wantOK(t, out)
			if out.Content != tt.want || out.Data["charset"] != tt.charset {
				t.Fatalf("content %q charset %v, want %q %s", out.Content, out.Data["charset"], tt.want, tt.charset)
			}
		})
	}
}

// TestWebExtractBounded: an endless body is read only up to the byte
// budget, and the text up to max_chars; the server sees the connection
// closed long before it could send everything.
func TestWebExtractBounded(t *testing.T) {
	const total = 64 << 20
	stream := func(prefix, fill string) (http.HandlerFunc, *atomic.Int64) {
		var sent atomic.Int64
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			n, _ := io.WriteString(w, prefix)
			sent.Add(int64(n))
			chunk := strings.Repeat(fill, 32<<10/len(fill))
			for sent.Load() < total {
				n, err := io.WriteString(w, chunk)
				sent.Add(int64(n))
				if err != nil {
					return
				}
			}
		}, &sent
	}
	w := newWebTool(t, urlpolicy.Policy{AllowPrivate: true}, nil)

	h, sent := stream("<p>", "word ")
	srv := newSite(t, h)
	out := w.invoke(map[string]any{"url": srv.URL, "max_chars": 100})
	wantOK(t, out)
	if len([]rune(out.Content)) != 100 || !strings.HasPrefix(out.Content, "word word") || out.Data["truncated"] != true {
		t.Fatalf("content %q (%d chars), truncated=%v", out.Content, len([]rune(out.Content)), out.Data["truncated"])
	}
	srv.Close() // waits for the handler, which stops when the client is gone
	if n := sent.Load(); n >= total/4 {
		t.Fatalf("server sent %d bytes before the client stopped reading", n)
	}

	// A page that is all script never yields max_chars of text: the read
	// stops at the byte budget.
	h, sent = stream("<html><body><script>", "x")
	srv2 := newSite(t, h)
	out = w.invoke(map[string]any{"url": srv2.URL})
	wantOK(t, out)
	if out.Content != "(no readable text)" || out.Data["truncated"] != true {
		t.Fatalf("content %q truncated=%v", out.Content, out.Data["truncated"])
	}
	srv2.Close()
	if n := sent.Load(); n >= total/4 {
		t.Fatalf("server sent %d bytes before the client stopped reading", n)
	}
}

// TestWebExtractDefaultPolicyDeniesLoopback: under the default policy a
// loopback URL is refused before approval; the operator is not asked and
// the server is never reached.
func TestWebExtractDefaultPolicyDeniesLoopback(t *testing.T) {
	srv := newSite(t, serve("text/plain", []byte("secret")))
	approver := &recordingApprover{decision: effect.DecisionAllowOnce}
	w := newWebTool(t, urlpolicy.Policy{}, approver)
	for _, u := range []string{srv.URL, "http://user:pw@127.1:" + srv.port() + "/?token=abc", "http://localhost:" + srv.port()} {
		res := w.dispatch(map[string]any{"url": u})
		if res.Status != demiurge.EffectDenied || !strings.HasPrefix(res.ModelView, "URL blocked by Host policy: private_") {
			t.Fatalf("%s: status %s %q", u, res.Status, res.ModelView)
		}
		if res.Data["executionStarted"] != false || res.Data["denial"] != "policy" {
			t.Fatalf("%s: data %v", u, res.Data)
		}
		audit, _ := res.Data["url_policy"].(map[string]any)
		if target, _ := audit["target"].(string); strings.ContainsAny(target[len("http://"):], "@?/") {
			t.Fatalf("%s: audit target %q", u, target)
		}
	}
	if srv.hits.Load() != 0 || len(approver.requests()) != 0 {
		t.Fatalf("server hits %d, approvals asked %d; want none", srv.hits.Load(), len(approver.requests()))
	}
}

func TestWebExtractApproval(t *testing.T) {
	srv := newSite(t, serve("text/plain", []byte("fetched")))
	raw := srv.URL + "/path?q=1"
	target := "http://127.0.0.1:" + srv.port()

	deny := &recordingApprover{decision: effect.DecisionDeny}
	res := newWebTool(t, urlpolicy.Policy{AllowPrivate: true}, deny).dispatch(map[string]any{"url": raw})
	if res.Status != demiurge.EffectDenied || res.ModelView != "approval denied: Extract URL from "+target {
		t.Fatalf("denied: status %s %q", res.Status, res.ModelView)
	}
	if srv.hits.Load() != 0 {
		t.Fatal("denied fetch reached the server")
	}
	asked := deny.requests()
	if len(asked) != 1 || asked[0].Action != "fetch" || asked[0].Target != target || asked[0].Risk != "high" || asked[0].Capability != "network.fetch" {
		t.Fatalf("approval requests %+v", asked)
	}

	allow := &recordingApprover{decision: effect.DecisionAllowOnce}
	w := newWebTool(t, urlpolicy.Policy{AllowPrivate: true}, allow)
	res = w.dispatch(map[string]any{"url": raw})
	if res.Status != demiurge.EffectSucceeded || res.ModelView != "fetched" || srv.hits.Load() != 1 {
		t.Fatalf("allowed: status %s %q hits %d", res.Status, res.ModelView, srv.hits.Load())
	}

	// What the operator sees of a URL is its scheme, host and port.
	secret := &recordingApprover{decision: effect.DecisionDeny}
	newWebTool(t, urlpolicy.Policy{AllowPrivate: true}, secret).dispatch(map[string]any{"url": "http://user:pw@127.0.0.1:" + srv.port() + "/SENSITIVE_PATH?token=abc#frag"})
	asked = secret.requests()
	if len(asked) != 1 || len(asked[0].Preview) != 1 || asked[0].Preview["url"] != target {
		t.Fatalf("preview %v, want only url %s", asked[0].Preview, target)
	}
	for _, shown := range []string{asked[0].Summary, asked[0].Target, fmt.Sprint(asked[0].Preview), strings.Join(asked[0].Notes, " ")} {
		for _, hidden := range []string{"user", "pw", "SENSITIVE_PATH", "token", "abc", "frag", "redacted"} {
			if strings.Contains(shown, hidden) {
				t.Fatalf("the operator sees %q in %q", hidden, shown)
			}
		}
	}

	call, refused := w.def.Adapter.Prepare(context.Background(), effect.Invocation{Args: map[string]any{"url": "  https://user:pw@Example.COM:443/a?token=s3cret#f  "}})
	if refused != nil {
		t.Fatalf("prepare refused: %s", refused.Content)
	}
	facts := call.ApprovalFacts()
	sum := sha256.Sum256([]byte("https://user:pw@Example.COM:443/a?token=s3cret#f"))
	if facts.Target != "https://example.com" || facts.Summary != "Extract URL from https://example.com" ||
		string(facts.RuleKey) != "web_extract:network.fetch:"+hex.EncodeToString(sum[:]) || facts.Baseline != policy.Prompt ||
		len(facts.Preview) != 1 || facts.Preview["url"] != "https://example.com" {
		t.Fatalf("facts %+v", facts)
	}
}

func TestWebExtractArguments(t *testing.T) {
	srv := newSite(t, serve("text/plain", []byte("x")))
	w := newWebTool(t, urlpolicy.Policy{AllowPrivate: true}, &recordingApprover{decision: effect.DecisionAllowOnce})
	for _, tt := range []struct {
		args   map[string]any
		status string
		view   string
	}{
		{map[string]any{"url": "  "}, demiurge.EffectInvalid, "url is required"},
		{map[string]any{"url": "ftp://example.com/"}, demiurge.EffectInvalid, "only http and https URLs are supported"},
		{map[string]any{"url": "file:///etc/passwd"}, demiurge.EffectInvalid, "only http and https URLs are supported"},
		{map[string]any{"url": "http://a..b/"}, demiurge.EffectDenied, "URL blocked by Host policy: invalid_url"},
		{map[string]any{"url": "http://metadata.google.internal/"}, demiurge.EffectDenied, "URL blocked by Host policy: metadata_hostname"},
		{map[string]any{"url": "http://169.254.169.254/latest/"}, demiurge.EffectDenied, "URL blocked by Host policy: metadata_address"},
		{map[string]any{}, demiurge.EffectInvalid, ""},
		{map[string]any{"url": srv.URL, "timeout_seconds": 61}, demiurge.EffectInvalid, ""},
		{map[string]any{"url": srv.URL, "max_chars": 12001}, demiurge.EffectInvalid, ""},
		{map[string]any{"url": srv.URL, "extra": true}, demiurge.EffectInvalid, ""},
	} {
		res := w.dispatch(tt.args)
		if res.Status != tt.status || (tt.view != "" && res.ModelView != tt.view) {
			t.Errorf("%v: status %s %q, want %s %q", tt.args, res.Status, res.ModelView, tt.status, tt.view)
		}
	}
	if srv.hits.Load() != 0 {
		t.Fatalf("refused calls reached the server %d times", srv.hits.Load())
	}
}

// TestWebExtractNoLookupBeforeApproval: nothing leaves the machine before
// approval, not even the DNS query of the host name. A denied call makes
// no lookup at all; an approved one looks the name up once, when the
// connection is opened, and a private answer is refused there, before any
// request.
func TestWebExtractNoLookupBeforeApproval(t *testing.T) {
	srv := newSite(t, serve("text/plain", []byte("internal")))
	u := "http://leak-c2VjcmV0.exfil.test:" + srv.port() + "/?q=1"

	dns := testutil.NewResolver(map[string]string{"leak-c2vjcmv0.exfil.test": "10.0.0.9"})
	deny := &recordingApprover{decision: effect.DecisionDeny}
	res := newWebTool(t, urlpolicy.Policy{Resolver: dns}, deny).dispatch(map[string]any{"url": u})
	if res.Status != demiurge.EffectDenied || res.ModelView != "approval denied: Extract URL from http://leak-c2vjcmv0.exfil.test:"+srv.port() {
		t.Fatalf("denied: status %s %q", res.Status, res.ModelView)
	}
	if got := dns.Lookups(); len(got) != 0 || len(deny.requests()) != 1 {
		t.Fatalf("lookups %v, approvals %d; want no lookup and one question", got, len(deny.requests()))
	}

	allow := &recordingApprover{decision: effect.DecisionAllowOnce}
	res = newWebTool(t, urlpolicy.Policy{Resolver: dns}, allow).dispatch(map[string]any{"url": u})
	if res.Status != demiurge.EffectDenied || res.ModelView != "URL blocked by Host policy before request: private_address" || res.Data["executionStarted"] != false {
		t.Fatalf("approved: status %s %q data %v", res.Status, res.ModelView, res.Data)
	}
	audit, _ := res.Data["url_policy"].(map[string]any)
	if audit["target"] != "http://leak-c2vjcmv0.exfil.test:"+srv.port() || fmt.Sprint(audit["resolved_addresses"]) != "[10.0.0.9]" {
		t.Fatalf("audit %v", audit)
	}
	if got := dns.Lookups(); len(got) != 1 || got[0] != "leak-c2vjcmv0.exfil.test" || srv.hits.Load() != 0 {
		t.Fatalf("lookups %v, server hits %d; want one lookup at connect and no request", got, srv.hits.Load())
	}
}

// sequenceDNS answers its i-th lookup with answers[i] (the last repeats).
type sequenceDNS struct {
	answers []string
	calls   atomic.Int32
}

func (s *sequenceDNS) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) {
	i := min(int(s.calls.Add(1))-1, len(s.answers)-1)
	return []net.IPAddr{{IP: net.IP(netip.MustParseAddr(s.answers[i]).AsSlice())}}, nil
}

// TestWebExtractRebinding: every new connection resolves and judges the
// name afresh. The name is admitted loopback for the first connection,
// whose answer redirects to the same name on another port; the second
// connection finds it private and is refused after a request was sent.
func TestWebExtractRebinding(t *testing.T) {
	other := newSite(t, serve("text/plain", []byte("internal")))
	srv := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://rebind.test:"+other.port()+"/", http.StatusFound)
	})
	dns := &sequenceDNS{answers: []string{"127.0.0.1", "10.0.0.9"}}
	w := newWebTool(t, urlpolicy.Policy{AllowPrivatePrefixes: loopbackOnly, Resolver: dns}, &recordingApprover{decision: effect.DecisionAllowOnce})
	res := w.dispatch(map[string]any{"url": "http://rebind.test:" + srv.port() + "/"})
	if res.Status != demiurge.EffectDenied || res.ModelView != "URL blocked by Host policy: private_address" || res.Data["executionStarted"] != true {
		t.Fatalf("status %s %q data %v", res.Status, res.ModelView, res.Data)
	}
	if srv.hits.Load() != 1 || other.hits.Load() != 0 || dns.calls.Load() != 2 {
		t.Fatalf("hits %d and %d, lookups %d; want 1, 0 and 2", srv.hits.Load(), other.hits.Load(), dns.calls.Load())
	}
}

// TestWebExtractTruncation: the result is the first max_chars characters
// of the text exactly, with no marker; data.truncated says whether text
// was cut (spec tool-runtime §1.3 web_extract).
func TestWebExtractTruncation(t *testing.T) {
	alphabet := "abcdefghijklmnopqrstuvwxyz"
	tests := []struct {
		name, ct, body string
		maxChars       any // nil: the default
		want           string
		truncated      bool
	}{
		{"plain, cut to 20", "text/plain", alphabet, 20, alphabet[:20], true},
		{"plain, exactly 20", "text/plain", alphabet[:20], 20, alphabet[:20], false},
		{"plain, shorter", "text/plain", alphabet[:19], 20, alphabet[:19], false},
		{"plain, one over", "text/plain", alphabet[:21], 20, alphabet[:20], true},
		{"max_chars 1", "text/plain", "xy", 1, "x", true},
		{"characters, not bytes", "text/plain; charset=utf-8", strings.Repeat("é", 30), 20, strings.Repeat("é", 20), true},
		{"html text", "text/html", "<p>" + alphabet + "</p>", 20, alphabet[:20], true},
		{"html title shares the budget", "text/html", "<title>T</title><p>" + alphabet + "</p>", 20, "T\n\n" + alphabet[:17], true},
		{"html exactly fits", "text/html", "<title>T</title><p>" + alphabet[:17] + "</p>", 20, "T\n\n" + alphabet[:17], false},
		{"default budget", "text/plain", strings.Repeat("z", 12001), nil, strings.Repeat("z", 12000), true},
		{"default budget, exact", "text/plain", strings.Repeat("z", 12000), nil, strings.Repeat("z", 12000), false},
		{"empty", "text/plain", "", 20, "(no readable text)", false},
	}
	w := newWebTool(t, urlpolicy.Policy{AllowPrivatePrefixes: loopbackOnly}, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newSite(t, serve(tt.ct, []byte(tt.body)))
			args := map[string]any{"url": srv.URL}
			if tt.maxChars != nil {
				args["max_chars"] = tt.maxChars
			}
			out := w.invoke(args)
			wantOK(t, out)
			if out.Content != tt.want || out.Data["truncated"] != tt.truncated {
				t.Fatalf("content %q (%d chars) truncated=%v, want %q truncated=%v",
					out.Content, len([]rune(out.Content)), out.Data["truncated"], tt.want, tt.truncated)
			}
		})
	}
}

func TestWebExtractRedirects(t *testing.T) {
	var to atomic.Value
	srv := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/go" {
			http.Redirect(w, r, to.Load().(string), http.StatusFound)
			return
		}
		io.WriteString(w, "landed")
	})
	p := urlpolicy.Policy{AllowPrivatePrefixes: loopbackOnly, Resolver: fixedDNS{"internal.test": "10.0.0.9", "site.test": "127.0.0.1"}}
	w := newWebTool(t, p, nil)

	to.Store("http://internal.test:" + srv.port() + "/")
	out := w.invoke(map[string]any{"url": srv.URL + "/go"})
	if !out.IsError || !out.ExecutionStarted || out.Denial != "policy" || out.Content != "URL blocked by Host policy: private_address" {
		t.Fatalf("redirect to a private name: %+v", out)
	}
	if srv.hits.Load() != 1 {
		t.Fatalf("hits %d, want 1 (the redirecting hop only)", srv.hits.Load())
	}

	to.Store("http://site.test:" + srv.port() + "/end")
	out = w.invoke(map[string]any{"url": srv.URL + "/go"})
	wantOK(t, out)
	audit, _ := out.Data["url_policy"].(map[string]any)
	if out.Content != "landed" || out.Data["url"] != "http://site.test:"+srv.port() || fmt.Sprint(audit["resolved_addresses"]) != "[127.0.0.1]" {
		t.Fatalf("followed redirect: %q url=%v audit=%v", out.Content, out.Data["url"], audit)
	}
}

func TestWebExtractFailures(t *testing.T) {
	srv := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			http.NotFound(w, r)
		case "/slow":
			<-r.Context().Done()
		}
	})
	w := newWebTool(t, urlpolicy.Policy{AllowPrivate: true}, nil)
	out := w.invoke(map[string]any{"url": srv.URL + "/missing"})
	if !out.IsError || !out.ExecutionStarted || out.Content != "web_extract failed: HTTP Error 404: Not Found" || out.Data["status"] != 404 {
		t.Fatalf("404: %+v", out)
	}

	out = w.invoke(map[string]any{"url": srv.URL + "/slow?token=s3cret", "timeout_seconds": 1})
	if !out.IsError || !out.ExecutionStarted || !strings.HasPrefix(out.Content, "web_extract failed: ") || strings.Contains(out.Content, "s3cret") {
		t.Fatalf("timeout: %+v", out)
	}

	closed := httptest.NewServer(http.NotFoundHandler())
	addr := closed.URL
	closed.Close()
	out = w.invoke(map[string]any{"url": addr + "/x?token=s3cret"})
	if !out.IsError || !strings.HasPrefix(out.Content, "web_extract failed: ") || strings.Contains(out.Content, "s3cret") || strings.Contains(out.Content, "/x") {
		t.Fatalf("refused connection: %+v", out)
	}
}

func TestWebExtractMetadata(t *testing.T) {
	for _, d := range builtin.Definitions([]string{"coding"}, builtin.Deps{}) {
		if d.Name != "web_extract" {
			continue
		}
		if got, want := [4]string{d.Risk, d.Capability, d.ApprovalPolicy, d.ModelOutputPolicy}, [4]string{"medium", "network.fetch", "prompt", ""}; got != want {
			t.Fatalf("metadata %v, want %v", got, want)
		}
		s := compileSchema(t, d.Schema)
		if s == nil || d.Schema["additionalProperties"] != false {
			t.Fatal("schema is not closed")
		}
		return
	}
	t.Fatal("web_extract missing from the coding toolset")
}
