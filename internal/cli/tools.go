package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/demiurge/demiurge/core"
)

func newToolsCmd(g *globals, streams IO) *cobra.Command {
	cmd := &cobra.Command{Use: "tools", Short: "Inspect the tools a core's turns see"}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "Print the resolved tool catalog of the core",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := openHost(cmd.Context(), g, "")
			if err != nil {
				return err
			}
			defer closeHost(cmd.Context(), h)
			cat, snap, err := h.Catalog(cmd.Context(), g.core)
			if err != nil {
				return err
			}
			out := []toolJSON{}
			for _, e := range cat.Entries() {
				source := e.Source
				if t, ok := snap.Core.Tool(e.Name); ok && e.Source == "authored" && core.IsPython(t.ModulePath) {
					source = "authored (python)" // runs on the Python worker
				}
				out = append(out, toolJSON{Name: e.Name, Source: source, Capability: e.Capability,
					ApprovalPolicy: e.ApprovalPolicy, Risk: e.Risk, Provenance: e.Provenance, Description: e.Description})
			}
			if asJSON {
				return writeJSON(streams.Out, map[string]any{"core_id": snap.Core.ID, "core_revision": snap.Revision, "tools": out})
			}
			tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSOURCE\tCAPABILITY\tAPPROVAL\tRISK\tPROVENANCE")
			for _, t := range out {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, t.Source, orDash(t.Capability), t.ApprovalPolicy, t.Risk, t.Provenance)
			}
			return tw.Flush()
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(list)
	return cmd
}

type toolJSON struct {
	Name           string `json:"name"`
	Source         string `json:"source"`
	Capability     string `json:"capability"`
	ApprovalPolicy string `json:"approval_policy"`
	Risk           string `json:"risk"`
	Provenance     string `json:"provenance"`
	Description    string `json:"description"`
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
