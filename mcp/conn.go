package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/sandbox"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// protocolVersion is the MCP revision the client offers. The newest
// stateless revision first probes with server/discover, which servers
// that predate it may leave unanswered until the connect timeout; the
// 2025-11-25 handshake is understood by every current server.
const protocolVersion = "2025-11-25"

// Discovery bounds: a server cannot make the Host page or hold without end.
const (
	maxListPages = 100
	maxTools     = 10000
)

// clientInfo is how the Host introduces itself to servers.
var clientInfo = &sdk.Implementation{Name: "demiurge", Version: "1"}

// conn is one live client session with one server, bound to the catalog
// entries built from it: every call of those entries goes through this
// conn, never through a name looked up elsewhere.
type conn struct {
	m       *Manager
	decl    Declaration
	secrets resolvedSecrets
	session *sdk.ClientSession
	proc    *stdioProc      // stdio only
	httpRT  *http.Transport // streamable HTTP only

	// life is cancelled when the conn starts closing: every call derives
	// from it, so a closing conn cancels its calls (the SDK then sends
	// notifications/cancelled) instead of waiting for them.
	life context.Context
	stop context.CancelFunc

	stale   atomic.Bool // the server announced tools/list_changed
	dead    atomic.Bool // the session ended (server exit, broken stream) or a call got no answer
	closing atomic.Bool
	once    sync.Once
	closed  chan struct{} // closed when close has finished
}

// dial constructs the client and connects it: spawns the stdio server or
// opens the HTTP session, then runs the MCP handshake, all bounded by ctx.
// secrets are d's interpolated env and header values; dir is the stdio
// working directory, already checked. On error nothing is left running (a
// spawned server is being ended in the background).
func (m *Manager) dial(ctx context.Context, d Declaration, secrets resolvedSecrets, dir, root string) (*conn, error) {
	life, stop := context.WithCancel(context.Background())
	c := &conn{m: m, decl: d, secrets: secrets, life: life, stop: stop, closed: make(chan struct{})}
	client := sdk.NewClient(clientInfo, &sdk.ClientOptions{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		// The Host serves no roots, sampling or elicitation to servers.
		Capabilities:           &sdk.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { c.stale.Store(true) },
	})
	var transport sdk.Transport
	switch d.Transport {
	case TransportStdio:
		home, err := m.privateHome(d.ID)
		if err != nil {
			stop()
			return nil, err
		}
		p, err := m.startStdio(ctx, d, m.serverEnv(home, secrets.env), dir, m.sandboxPolicy(home, root))
		if err != nil {
			stop()
			return nil, err
		}
		c.proc = p
		transport = &sdk.IOTransport{Reader: p.stdout(), Writer: p.stdin()}
	case TransportStreamableHTTP:
		t, rt, err := m.httpTransport(d, secrets.headers)
		if err != nil {
			stop()
			return nil, err
		}
		c.httpRT = rt
		transport = t
	default:
		stop()
		return nil, demiurge.Errorf(demiurge.ECONFIG, "unknown transport %s", d.Transport)
	}
	session, err := client.Connect(ctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		m.closeLater(c)
		return nil, err
	}
	c.session = session
	m.wg.Go(func() {
		_ = session.Wait()
		// The server went away (or the conn was closed): nothing can be
		// called through it any more, and its process must be reaped.
		c.dead.Store(true)
		c.close()
	})
	return c, nil
}

// serverEnv is a stdio server's whole environment: the allowlisted Host
// variables (Options.BaseEnv), the declared variables, and HOME in the
// server's private home whatever the others say. Nothing else of the
// Host's environment reaches it.
func (m *Manager) serverEnv(home string, declared map[string]string) []string {
	env := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := env[k]; !ok {
			order = append(order, k)
		}
		env[k] = v
	}
	for _, kv := range m.baseEnv() {
		if k, v, ok := cutEnv(kv); ok {
			set(k, v)
		}
	}
	for _, k := range sortedKeys(declared) {
		set(k, declared[k])
	}
	set("HOME", home)
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+env[k])
	}
	return out
}

func cutEnv(kv string) (string, string, bool) {
	for i := 1; i < len(kv); i++ { // a leading '=' belongs to the name (Windows)
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return "", "", false
}

// sandboxPolicy is the sandbox of a stdio server with its private home,
// run for the workspace root: it may write in both; nil when the operator
// turned the sandbox off.
func (m *Manager) sandboxPolicy(home, root string) *sandbox.Policy {
	if !m.opts.Sandbox.Settings.Enabled() {
		return nil
	}
	writable := []string{home}
	if root != "" {
		writable = append(writable, root)
	}
	p := m.opts.Sandbox.Policy(writable...)
	return &p
}

// privateHome returns the server's private home, created 0700.
func (m *Manager) privateHome(serverID string) (string, error) {
	var dir string
	if m.opts.PrivateHome != nil {
		dir = m.opts.PrivateHome(serverID)
	} else {
		base, err := m.defaultHomeBase()
		if err != nil {
			return "", err
		}
		dir = base + string(os.PathSeparator) + sanitizeName(serverID, "mcp")
	}
	if dir == "" {
		return "", demiurge.Errorf(demiurge.ECONFIG, "no private home for MCP server %s", serverID)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", demiurge.WrapError(demiurge.EINTERNAL, err, "MCP server %s: private home: %s", serverID, reason(err))
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", demiurge.WrapError(demiurge.EINTERNAL, err, "MCP server %s: private home: %s", serverID, reason(err))
	}
	return dir, nil
}

// alive reports whether calls can still go through c.
func (c *conn) alive() bool {
	if c == nil || c.closing.Load() || c.dead.Load() {
		return false
	}
	return c.proc == nil || c.proc.alive()
}

// listTools lists every tool the server offers, following pagination
// within the discovery bounds.
func (c *conn) listTools(ctx context.Context) ([]*sdk.Tool, error) {
	var out []*sdk.Tool
	params := &sdk.ListToolsParams{}
	for page := 0; ; page++ {
		if page == maxListPages {
			return nil, fmt.Errorf("tools/list returned more than %d pages", maxListPages)
		}
		res, err := c.session.ListTools(ctx, params)
		if err != nil {
			return nil, err
		}
		out = append(out, res.Tools...)
		if len(out) > maxTools {
			return nil, fmt.Errorf("server lists more than %d tools", maxTools)
		}
		if res.NextCursor == "" {
			return out, nil
		}
		params = &sdk.ListToolsParams{Cursor: res.NextCursor}
	}
}

// close ends the conn: in-flight calls are cancelled, the session is
// closed, then the stdio server's process tree is ended and reaped (its
// stderr logged) or the HTTP transport's idle connections are closed. It
// is idempotent; every caller returns once it is done.
func (c *conn) close() {
	c.once.Do(func() {
		c.closing.Store(true)
		c.stop()
		if c.session != nil {
			_ = c.session.Close()
		}
		if c.proc != nil {
			grace := c.m.opts.CloseGrace
			if c.session == nil {
				grace = 0 // it never became a server worth waiting for
			}
			c.proc.shutdown(grace, c.secrets)
		}
		if c.httpRT != nil {
			c.httpRT.CloseIdleConnections()
		}
		close(c.closed)
	})
	<-c.closed
}

// call runs tools/call under the call timeout and the conn's lifetime.
func (c *conn) call(ctx context.Context, tool string, args map[string]any) (*sdk.CallToolResult, error) {
	callCtx, cancel := context.WithTimeout(ctx, c.decl.CallTimeout)
	defer cancel()
	stop := context.AfterFunc(c.life, cancel)
	defer stop()
	res, err := c.session.CallTool(callCtx, &sdk.CallToolParams{Name: tool, Arguments: args})
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case c.life.Err() != nil:
		return nil, errConnClosed
	case errors.Is(callCtx.Err(), context.DeadlineExceeded):
		return nil, &callTimeoutError{seconds: c.decl.CallTimeout.Seconds()}
	}
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		// The server did not answer at all (its HTTP endpoint refused the
		// request, the stream broke): the connection cannot be trusted
		// any more, and the next preparation connects afresh.
		c.dead.Store(true)
	}
	return nil, err
}

var errConnClosed = errors.New("MCP server connection closed during the call")

type callTimeoutError struct{ seconds float64 }

func (e *callTimeoutError) Error() string {
	return "MCP call timed out after " + formatSeconds(e.seconds) + "s"
}

// validTool checks a listed tool's input schema the way catalog
// preparation will compile it, so one bad schema drops one tool instead of
// failing the whole turn's catalog.
func validTool(name string, schema map[string]any) error {
	_, err := effect.Definition{Name: name, Source: effect.SourceMCP, Schema: schema}.Bind("mcp", "check")
	return err
}
