package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/demiurge/demiurge/redact"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// discovery is one server to discover: dial it (conn nil) or list the
// tools of its live connection again (conn set, after tools/list_changed).
type discovery struct {
	decl Declaration
	dir  string // stdio working directory, checked
	root string // the workspace, links resolved: writable in the sandbox
	conn *conn
}

// discovered is the outcome of one discovery.
type discovered struct {
	decl      Declaration
	conn      *conn // set on success
	relist    *conn // the connection a re-listing used
	tools     []toolInfo
	skipped   []string
	err       string // redacted failure
	cancelled bool   // the preparation was cancelled: nothing to cache
}

// maxDescriptionChars bounds a listed tool description: it goes into every
// provider request of every turn.
const maxDescriptionChars = 4096

// toolInfo is one offered tool as the server listed it.
type toolInfo struct {
	raw         string
	description string
	schema      map[string]any
}

// discoverAll runs the discoveries concurrently and waits for all of
// them. Each takes a slot of the Manager-wide semaphore first, so at most
// MaxConcurrentConnects run at once across every session.
func (m *Manager) discoverAll(ctx context.Context, jobs []discovery) []discovered {
	out := make([]discovered, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() { out[i] = m.discoverOne(ctx, j) })
	}
	wg.Wait()
	return out
}

// discoverOne connects (or reuses the connection) and lists the tools,
// bounded by the connect timeout from the moment a slot is taken. On any
// failure the new connection is closed in the background.
func (m *Manager) discoverOne(ctx context.Context, j discovery) discovered {
	res := discovered{decl: j.decl, relist: j.conn}
	if err := m.acquire(ctx); err != nil {
		res.cancelled = true
		return res
	}
	defer m.release()
	cctx, cancel := context.WithTimeout(ctx, j.decl.ConnectTimeout)
	defer cancel()
	c := j.conn
	if c == nil {
		// Interpolated once: a missing variable fails before any client
		// exists, and a dial error is redacted with the same values.
		secrets, err := resolveValues(j.decl, m.opts.Getenv)
		if err != nil {
			return failed(ctx, cctx, res, err, nil)
		}
		if c, err = m.dial(cctx, j.decl, secrets, j.dir, j.root); err != nil {
			return failed(ctx, cctx, res, err, secrets.red)
		}
	} else {
		c.stale.Store(false) // a notification from now on marks it again
	}
	listed, err := c.listTools(cctx)
	if err != nil {
		m.closeLater(c)
		return failed(ctx, cctx, res, err, c.secrets.red)
	}
	res.conn = c
	res.tools, res.skipped = offeredTools(j.decl, listed)
	return res
}

// failed fills res for a failed discovery: cancelled when the preparation
// itself ended, a timeout message when the connect timeout passed, or the
// error redacted with the server's env and header secrets (nil when
// interpolation itself failed: there are none yet).
func failed(ctx, cctx context.Context, res discovered, err error, red *redact.Redactor) discovered {
	switch {
	case ctx.Err() != nil:
		res.cancelled = true
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		res.err = fmt.Sprintf("MCP discovery timed out after %ss", formatSeconds(res.decl.ConnectTimeout.Seconds()))
	default:
		res.err = redact.RedactError(err, red, redact.Operator).Error()
	}
	return res
}

// offeredTools applies the declaration's filters and keeps the tools the
// catalog can offer: a named tool whose input schema compiles. The others
// are reported in skipped.
func offeredTools(d Declaration, listed []*sdk.Tool) (tools []toolInfo, skipped []string) {
	seen := map[string]bool{}
	for _, t := range listed {
		if t == nil || t.Name == "" || seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		if !allowedTool(t.Name, d.Include, d.Exclude) {
			continue
		}
		schema := inputSchema(t.InputSchema)
		if err := validTool(t.Name, schema); err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: invalid input schema", t.Name))
			continue
		}
		desc := cmp.Or(bound(t.Description, maxDescriptionChars), fmt.Sprintf("Tool `%s` from MCP server `%s`.", t.Name, d.ID))
		tools = append(tools, toolInfo{raw: t.Name, description: desc, schema: schema})
	}
	return tools, skipped
}

// inputSchema is a listed schema when it is a non-empty JSON object,
// otherwise the empty object schema.
func inputSchema(v any) map[string]any {
	var m map[string]any
	switch x := v.(type) {
	case map[string]any:
		m = x
	case json.RawMessage:
		_ = json.Unmarshal(x, &m)
	case nil:
	default:
		if b, err := json.Marshal(x); err == nil {
			_ = json.Unmarshal(b, &m)
		}
	}
	if len(m) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return m
}
