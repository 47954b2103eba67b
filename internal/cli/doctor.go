package cli

import (
	"context"
	"fmt"
	"github.com/demiurge/demiurge/pyworker"
	"strings"

	"github.com/spf13/cobra"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/sandbox"
)

// newDoctorCmd is `demiurge doctor`, the operator's health report of a
// runtime home (host.Doctor). Exit 0 healthy, 1 any finding, 2 the report
// could not be made (the home cannot be resolved or created).
func newDoctorCmd(g *globals, streams IO) *cobra.Command {
	var asJSON, repair bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the runtime home: permissions, .env, providers, database, core repository, cores and their templates, tasks, timezone",
		Args:  cobra.NoArgs,
		// The doctor reads .env itself, reporting a bad one as a finding.
		Annotations: map[string]string{skipEnv: "1"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := diagnose(cmd.Context(), g, repair)
			if err != nil {
				if asJSON {
					_ = writeJSON(streams.Out, doctorFailure{Home: g.home, OK: false,
						Error: &errorOutput{Code: "doctor.execution_error", Message: demiurge.ErrorMessage(err)}})
				}
				return &exitError{code: ExitUsage, err: err}
			}
			if asJSON {
				if err := writeJSON(streams.Out, rep); err != nil {
					return err
				}
			} else {
				printDoctor(streams, rep)
			}
			if !rep.OK {
				return failed()
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&repair, "repair", false, "tighten the modes of the home's private files and directories (no content is changed)")
	return cmd
}

// doctorFailure is `doctor --json` when no report could be made.
type doctorFailure struct {
	Home  string       `json:"home"`
	OK    bool         `json:"ok"`
	Error *errorOutput `json:"error"`
}

// diagnose makes the report of the home; it fails only when the home
// cannot be resolved or created.
func diagnose(ctx context.Context, g *globals, repair bool) (*host.DoctorReport, error) {
	home, err := g.homeDir()
	if err != nil {
		return nil, err
	}
	return host.Doctor(ctx, host.DoctorOptions{Home: home, CoreID: g.core, Getenv: g.getenv, Repair: repair, Timezone: g.timezone})
}

func printDoctor(streams IO, rep *host.DoctorReport) {
	printf(streams, "home: %s\n", rep.Home)
	if rep.Database.OK {
		printf(streams, "database: ok (schema version %d, %s) %s\n", rep.Database.SchemaVersion, rep.Database.Engine, rep.Database.Path)
	} else {
		printf(streams, "database: unavailable %s\n", rep.Database.Path)
	}
	state := "consistent"
	if !rep.Repository.Consistent {
		state = "INCONSISTENT"
	}
	printf(streams, "core repository: %s %s\n", state, rep.Repository.Path)
	printf(streams, "live revision: %s\nprevious revision: %s\n", orNone(rep.Repository.Live), orNone(rep.Repository.Previous))
	printf(streams, "local edits: %d\n", rep.Repository.LocalEdits)
	for _, c := range rep.Cores {
		verdict := "ok"
		if !c.OK {
			verdict = "fails to load"
		}
		printf(streams, "core %s: %s\n", c.CoreID, verdict)
	}
	printHosts(streams, rep.Hosts)
	printf(streams, "active tasks: %d\n", rep.ActiveTasks)
	printf(streams, "timezone: %s (%s)\n", orNone(rep.Timezone.Name), orNone(rep.Timezone.Source))
	printf(streams, "sandbox: %s\n", sandboxLine(rep.Sandbox))
	printf(streams, "python: %s\n", pythonLine(rep.Python))
	for _, r := range rep.Repaired {
		printf(streams, "repaired %s\n", r)
	}
	for _, f := range rep.Findings {
		printf(streams, "%s %s: %s\n  fix: %s\n", f.Severity, f.Code, f.Message, f.Remediation)
	}
	if rep.Counts.Warning > 0 {
		printf(streams, "%d warning(s)\n", rep.Counts.Warning)
	}
	if rep.OK {
		printf(streams, "ok\n")
	} else {
		printf(streams, "%d problem(s) found\n", rep.Counts.Error)
	}
}

// sandboxLine is the sandbox's state in one line.
func sandboxLine(r sandbox.Report) string {
	switch {
	case r.Mode == sandbox.ModeOff:
		return "off (sandbox.mode: off): terminal commands and MCP servers run unconfined"
	case r.Working:
		return fmt.Sprintf("working (%s, network %s, Landlock ABI %d)", r.Mode, r.Network, r.Landlock)
	case len(r.Missing) > 0:
		return "UNAVAILABLE: missing " + strings.Join(r.Missing, ", ")
	}
	return "UNAVAILABLE: " + r.Error
}

// pythonLine is the doctor's line for the Python worker.
func pythonLine(p pyworker.ProbeReport) string {
	switch {
	case p.Started:
		return p.Interpreter + " " + p.Version + " (worker starts)"
	case p.Error != "":
		return "unavailable: " + p.Error
	}
	return "unavailable"
}

// printHosts is the doctor's lines for the Hosts sharing the ledger: a
// count, then one line per live Host with the age of its lease.
func printHosts(streams IO, hs host.DoctorHosts) {
	printf(streams, "hosts: %d live, %d gone, %d stopped\n", len(hs.Live), hs.Gone, hs.Stopped)
	for _, h := range hs.Live {
		expiry := "expires in " + secondsText(h.ExpiresInSeconds)
		if h.ExpiresInSeconds < 0 {
			expiry = "expired " + secondsText(-h.ExpiresInSeconds) + " ago, its process still runs"
		}
		printf(streams, "  %s on %s pid %d: lease renewed %s ago, %s\n",
			h.HostID, orNone(h.Hostname), h.PID, secondsText(h.LeaseAgeSeconds), expiry)
	}
}

// secondsText renders seconds to the tenth ("1.5s", "-2.0s").
func secondsText(s float64) string { return fmt.Sprintf("%.1fs", s) }
