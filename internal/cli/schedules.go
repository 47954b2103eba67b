package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/schedule"
)

// newSchedulesCmd lists the cores' schedules and runs one on demand.
func newSchedulesCmd(g *globals, streams IO) *cobra.Command {
	cmd := &cobra.Command{Use: "schedules", Short: "List schedules and run one now"}
	var asJSON bool
	list := &cobra.Command{
		Use: "list", Short: "List every core's schedules with their next and last run", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withHost(cmd.Context(), g, func(ctx context.Context, h *host.Host) error {
				st, err := h.ListSchedules(ctx)
				if err != nil {
					return err
				}
				out := make([]scheduleJSON, 0, len(st))
				for _, s := range st {
					out = append(out, toScheduleJSON(s))
				}
				if asJSON {
					return writeJSON(streams.Out, out)
				}
				writeScheduleTable(streams.Out, out, h.Timezone().Name)
				return nil
			})
		},
	}
	run := &cobra.Command{
		Use: "run [CORE/]ID", Short: "Run a schedule now (in the default core unless CORE/ is given) and wait for it",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHost(cmd.Context(), g, func(ctx context.Context, h *host.Host) error {
				coreID, id := coreOr(g.core, h.DefaultCore()), args[0]
				if c, s, ok := strings.Cut(args[0], "/"); ok {
					coreID, id = c, s
				}
				r, err := h.RunSchedule(ctx, coreID, id)
				if err != nil {
					return err
				}
				if asJSON {
					if err := writeJSON(streams.Out, map[string]any{
						"run_id": r.RunID, "work_id": r.WorkID, "due_at": demiurge.FormatTime(r.DueAt), "status": r.Status, "error": r.Error,
					}); err != nil {
						return err
					}
				} else {
					fmt.Fprintf(streams.Out, "schedule %s/%s run %s: %s\n", coreID, id, r.RunID, r.Status)
				}
				if r.Status != demiurge.WorkSucceeded {
					if !asJSON && r.Error != "" {
						fmt.Fprintln(streams.Err, r.Error)
					}
					return failed()
				}
				return nil
			})
		},
	}
	for _, c := range []*cobra.Command{list, run} {
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	}
	cmd.AddCommand(list, run)
	return cmd
}

type scheduleJSON struct {
	CoreID     string `json:"core_id"`
	ScheduleID string `json:"schedule_id"`
	Cron       string `json:"cron"`
	Enabled    bool   `json:"enabled"`
	File       string `json:"file"`
	NextRun    string `json:"next_run"`
	LastRun    string `json:"last_run"`
	LastRunID  string `json:"last_run_id"`
	LastStatus string `json:"last_status"`
	LastError  string `json:"last_error,omitempty"`
	CoreError  string `json:"core_error,omitempty"`
}

func toScheduleJSON(s schedule.Status) scheduleJSON {
	return scheduleJSON{
		CoreID: s.CoreID, ScheduleID: s.ScheduleID, Cron: s.Cron, Enabled: s.Enabled, File: s.File,
		NextRun: demiurge.FormatTime(s.NextRun), LastRun: demiurge.FormatTime(s.LastRun), LastRunID: s.LastRunID,
		LastStatus: s.LastStatus, LastError: s.LastError, CoreError: s.CoreError,
	}
}

func writeScheduleTable(w io.Writer, rows []scheduleJSON, tz string) {
	if len(rows) == 0 {
		fmt.Fprintln(w, "No schedules.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "CORE\tSCHEDULE\tCRON (%s)\tENABLED\tNEXT\tLAST\tSTATUS\n", tz)
	for _, r := range rows {
		if r.CoreError != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\tcore does not load: %s\n", r.CoreID, r.CoreError)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\t%s\t%s\n", r.CoreID, r.ScheduleID, r.Cron, r.Enabled, r.NextRun, r.LastRun, r.LastStatus)
	}
	tw.Flush()
}

// newServeCmd runs the long-lived Host: the scheduler, background tasks,
// completions and delivery retries, and the gateway when a core enables a
// channel, until SIGINT or SIGTERM.
func newServeCmd(g *globals, streams IO) *cobra.Command {
	return &cobra.Command{
		Use: "serve", Short: "Run the long-lived Host (scheduler, background work, enabled channels) until interrupted", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withHost(cmd.Context(), g, func(ctx context.Context, h *host.Host) error {
				if enabled, err := h.ChannelsEnabled(ctx); err != nil {
					return err
				} else if enabled {
					// A channel that cannot run is reported, and serve
					// goes on with the rest of its work.
					report, err := h.StartGateway(ctx, host.GatewayOptions{})
					writeGatewayReport(streams.Err, "demiurge serve", report)
					if err != nil && len(report) == 0 {
						return err
					}
				}
				h.StartScheduler()
				fmt.Fprintf(streams.Err, "demiurge serve: home %s, timezone %s; stop with Ctrl-C\n", h.Home().Dir, h.Timezone().Name)
				<-ctx.Done()
				return nil
			})
		},
	}
}
