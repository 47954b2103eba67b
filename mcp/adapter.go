package mcp

import (
	"context"

	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/redact"
)

// toolDefinition is the catalog definition of one tool of a connected
// server. Its adapter is bound to c: the call goes to the server the tool
// was listed on, whatever else the Host connects meanwhile.
func toolDefinition(d Declaration, c *conn, t toolInfo, name string) effect.Definition {
	return effect.Definition{
		Name:           name,
		Description:    t.description,
		Schema:         t.schema,
		Source:         effect.SourceMCP,
		AdapterKey:     "mcp:" + d.ID + "/" + t.raw,
		Provenance:     "mcp:" + d.ID + "/" + t.raw,
		Risk:           d.Risk,
		Capability:     d.Capability,
		ApprovalPolicy: d.ApprovalPolicy,
		Adapter:        &toolAdapter{c: c, server: d.ID, tool: t.raw},
	}
}

// toolAdapter calls one tool of one connection. The effect runtime has
// checked the entry's capability (mcp.call:<id> unless declared otherwise)
// before Prepare and the call's approval before Run.
type toolAdapter struct {
	c      *conn
	server string
	tool   string
}

var _ effect.Adapter = (*toolAdapter)(nil)

// Prepare refuses a call whose connection is gone before anyone is asked
// to approve it.
func (a *toolAdapter) Prepare(_ context.Context, inv effect.Invocation) (effect.Call, *effect.Outcome) {
	if !a.c.alive() {
		out := a.notConnected(inv)
		return nil, &out
	}
	args := inv.Args
	if args == nil {
		args = map[string]any{}
	}
	return &toolCall{a: a, inv: inv, args: args}, nil
}

// toolCall is one prepared call of an MCP tool: the arguments go to the
// server as they are, since the server's schema is the contract.
type toolCall struct {
	a    *toolAdapter
	inv  effect.Invocation
	args map[string]any
}

// ApprovalFacts describes the call for the operator (spec tool-runtime
// §4.3: action mcp.call, target <server>/<tool>).
func (c *toolCall) ApprovalFacts() effect.ApprovalFacts {
	target := c.a.server + "/" + c.a.tool
	return effect.ApprovalFacts{
		Action: ActionCall, Target: target, Summary: "Call MCP tool " + target,
		RuleKey: effect.RuleKey(c.inv.Entry.Name + ":" + c.inv.Entry.Capability + ":" + ActionCall + ":" + target),
	}
}

// Run calls the tool, bounded by the declaration's timeout_seconds and
// cancelled with the caller (the server is sent notifications/cancelled).
// The connection can end at any moment, so Run asks once more whether it
// is alive. A cancelled caller gets its context's error back, which the
// runtime records as cancelled or timed out; everything else is an
// outcome the model sees.
func (c *toolCall) Run(ctx context.Context) (effect.Outcome, error) {
	a := c.a
	if !a.c.alive() {
		return a.notConnected(c.inv), nil
	}
	res, err := a.c.call(ctx, a.tool, c.args)
	if err != nil {
		if ctx.Err() != nil {
			return effect.Outcome{}, ctx.Err()
		}
		red := a.c.secrets.red.With(redact.Discover(map[string]any{"arguments": c.args})...)
		return effect.Outcome{
			IsError: true, ExecutionStarted: true,
			Content: "MCP tool failed: " + redact.RedactError(err, red, redact.Model).Error(),
			Data:    map[string]any{"mcpServer": a.server, "mcpTool": a.tool, "status": "error"},
		}, nil
	}
	return convertResult(res, a.server, a.tool, unknownTo(c.inv.Turn.Secrets, a.c.secrets.red)), nil
}

func (a *toolAdapter) notConnected(inv effect.Invocation) effect.Outcome {
	return effect.Outcome{
		IsError: true,
		Content: "MCP server is not connected for tool: " + inv.Entry.Name,
		Data:    map[string]any{"mcpServer": a.server, "mcpTool": a.tool},
	}
}

// unknownTo returns the secrets of red that the turn's set does not know
// (preparation adds a connection's secrets to its turn; a call made under
// another turn context may not have them). The adapter replaces those
// itself, so no value the Host interpolated leaves unredacted.
func unknownTo(turn *effect.Secrets, red *redact.Redactor) *redact.Redactor {
	if turn == nil {
		return red
	}
	known := turn.Redactor()
	var unknown []redact.Secret
	for _, s := range red.Secrets() {
		if known.String(s.Value, redact.Model) == s.Value {
			unknown = append(unknown, s)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	return redact.New(unknown...)
}
