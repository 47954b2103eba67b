package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/mcp"
)

// newMCPCmd shows the core's MCP servers. list reads the declarations
// without connecting; check connects to each enabled server (running it is
// the operator's approval), lists its tools and disconnects. Both name the
// Host variables each server's env and headers reference, never a value;
// a credential-looking one the core does not grant (secret.bind:<NAME>)
// keeps its server from connecting, in a turn and in check alike.
func newMCPCmd(g *globals, streams IO) *cobra.Command {
	cmd := &cobra.Command{Use: "mcp", Short: "List and check the core's MCP servers"}
	var asJSON bool
	var workspace string
	statuses := func(check bool) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, _ []string) error {
			return withHost(cmd.Context(), g, func(ctx context.Context, h *host.Host) error {
				servers, err := h.MCPServers(ctx, coreOr(g.core, h.DefaultCore()))
				if err != nil {
					return err
				}
				var st []mcp.ServerStatus
				if check {
					ws, err := g.workspace(ctx, h, workspace)
					if err != nil {
						return err
					}
					st = h.CheckMCP(ctx, servers, ws)
				} else {
					st = h.MCPStatus(servers)
				}
				if st == nil {
					st = []mcp.ServerStatus{}
				}
				if asJSON {
					return writeJSON(streams.Out, st)
				}
				writeMCPTable(streams.Out, st)
				if check {
					for _, s := range st {
						if s.State == "failed" || s.State == "denied" {
							return failed()
						}
					}
				}
				return nil
			})
		}
	}
	list := &cobra.Command{Use: "list", Short: "List the declared servers (no connection)", Args: cobra.NoArgs, RunE: statuses(false)}
	check := &cobra.Command{Use: "check", Short: "Connect to each enabled server, list its tools, disconnect", Args: cobra.NoArgs, RunE: statuses(true)}
	check.Flags().StringVar(&workspace, "workspace", "", "workspace stdio servers run in (env DEMIURGE_WORKSPACE, default the current directory)")
	for _, c := range []*cobra.Command{list, check} {
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	}
	cmd.AddCommand(list, check)
	return cmd
}

func writeMCPTable(w io.Writer, st []mcp.ServerStatus) {
	if len(st) == 0 {
		fmt.Fprintln(w, "No MCP servers declared.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tTRANSPORT\tSTATE\tTOOLS\tLAST ERROR")
	for _, s := range st {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", s.Server, s.Transport, s.State, s.Tools, s.Error)
	}
	tw.Flush()
	writeHostVariables(w, st)
}

// writeHostVariables lists, per server, which Host variable goes where:
// "x  env LOG_LEVEL ← ${AWS_SECRET_ACCESS_KEY}  credential, not granted
// (needs secret.bind:AWS_SECRET_ACCESS_KEY)".
func writeHostVariables(w io.Writer, st []mcp.ServerStatus) {
	header := false
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, s := range st {
		for _, v := range s.HostVariables {
			if !header {
				fmt.Fprintln(w, "\nHost variables (names only; values are never shown):")
				header = true
			}
			note := ""
			switch {
			case v.Credential && v.Exported:
				note = "credential, granted by " + v.Grant
			case v.Credential:
				note = "credential, not granted (needs " + v.Grant + ")"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Server, v.String(), note)
		}
	}
	tw.Flush()
}
