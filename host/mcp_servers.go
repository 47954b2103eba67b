package host

import (
	"context"

	"github.com/demiurge/demiurge/mcp"
	"github.com/demiurge/demiurge/policy"
)

// MCPServers are the MCP servers a core declares, with the core's default
// grants: they decide which credential-looking Host variables a server may
// be given (secret.bind:<NAME>), in a turn and in a check alike.
type MCPServers struct {
	decls  []mcp.Declaration
	grants policy.Grants
}

// MCPServers loads a core and reads its MCP declarations.
func (h *Host) MCPServers(ctx context.Context, coreID string) (MCPServers, error) {
	snap, err := h.LoadCore(ctx, coreID)
	if err != nil {
		return MCPServers{}, err
	}
	decls, err := mcp.LoadCore(snap.Core)
	if err != nil {
		return MCPServers{}, err
	}
	return MCPServers{decls: decls, grants: policy.NewGrants(snap.Core.CapabilitySources().Defaults, nil)}, nil
}

// MCPStatus is the state of each declared server without connecting.
func (h *Host) MCPStatus(s MCPServers) []mcp.ServerStatus {
	return h.mcp.Status("", s.decls, s.grants)
}

// CheckMCP connects to each enabled server (stdio servers run in
// workspace), lists its tools and disconnects. The operator asking for the
// check is the approval to run them.
func (h *Host) CheckMCP(ctx context.Context, s MCPServers, workspace string) []mcp.ServerStatus {
	return h.mcp.Check(ctx, s.decls, mcp.CheckOptions{Workspace: workspace, Gate: mcp.AllowOperator, Grants: s.grants})
}
