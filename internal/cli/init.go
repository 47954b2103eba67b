package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/demiurge/demiurge/host"
)

func newInitCmd(g *globals, streams IO) *cobra.Command {
	var refresh string
	var check, asJSON bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create the runtime home (idempotent)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := g.homeDir()
			if err != nil {
				return err
			}
			rep, err := host.Init(home, refresh)
			if err != nil {
				return err
			}
			out := initJSON{InitReport: rep, Cores: []coreJSON{}, Findings: []host.DoctorFinding{}}
			if out.DatabaseCreated, err = host.InitDatabase(cmd.Context(), host.Home{Dir: home}, g.getenv); err != nil {
				return err
			}
			if check {
				h, err := host.Open(cmd.Context(), host.Options{Home: home, Getenv: g.getenv, EnvFile: g.env, Timezone: g.timezone, OneShot: true})
				if err != nil {
					return err
				}
				defer closeHost(cmd.Context(), h)
				for _, id := range []string{"assistant", "evolver"} {
					snap, err := h.LoadCore(cmd.Context(), id)
					if err != nil {
						return err
					}
					out.Cores = append(out.Cores, coreJSON{CoreID: id, Path: h.Home().CoreDir(id), Revision: snap.Revision})
				}
				out.Checked = true
				drift, err := host.TemplateDrift(h.Home(), g.core)
				if err != nil {
					return err
				}
				out.Findings = drift
			}
			errs := 0
			for _, f := range out.Findings {
				if f.Severity == "error" {
					errs++
				}
			}
			out.OK = errs == 0
			if asJSON {
				if err := writeJSON(streams.Out, out); err != nil {
					return err
				}
				if !out.OK {
					return failed()
				}
				return nil
			}
			fmt.Fprintf(streams.Out, "initialized %s\n", rep.Home)
			if rep.ConfigCreated {
				fmt.Fprintln(streams.Out, "created config.yaml")
			}
			if out.DatabaseCreated {
				fmt.Fprintln(streams.Out, "created runtime/runtime.sqlite3")
			}
			for _, c := range rep.CoresCreated {
				fmt.Fprintf(streams.Out, "created core %s\n", c)
			}
			for _, c := range rep.Refreshed {
				fmt.Fprintf(streams.Out, "refreshed %s from the embedded templates\n", c)
			}
			for _, c := range out.Cores {
				fmt.Fprintf(streams.Out, "core %s@%s ok\n", c.CoreID, c.Revision)
			}
			for _, f := range out.Findings {
				fmt.Fprintf(streams.Out, "%s %s: %s\n  fix: %s\n", f.Severity, f.Code, f.Message, f.Remediation)
			}
			if !out.OK {
				return failed()
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&refresh, "refresh", "", "re-copy a core from the embedded templates: assistant, evolver, global or all")
	cmd.Flags().BoolVar(&check, "check", false, "load every core, open the database and compare the cores with the embedded templates (exit 1 on an error finding)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

type initJSON struct {
	host.InitReport
	DatabaseCreated bool       `json:"database_created"`
	Checked         bool       `json:"checked"`
	Cores           []coreJSON `json:"cores"`
	// Findings are the template drift findings of --check (doctor codes);
	// OK is false when one is an error.
	Findings []host.DoctorFinding `json:"findings"`
	OK       bool                 `json:"ok"`
}

type coreJSON struct {
	CoreID   string `json:"core_id"`
	Path     string `json:"path"`
	Revision string `json:"revision"`
}
