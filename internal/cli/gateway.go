package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/host"
)

// newGatewayCmd runs every enabled channel of every core (with the
// scheduler, the task worker and the delivery loop) until SIGINT or
// SIGTERM, which drain the turns in flight; `gateway status` reports the
// channels.
func newGatewayCmd(g *globals, streams IO) *cobra.Command {
	var fakeScript string
	var asJSON bool
	cmd := &cobra.Command{
		Use: "gateway", Short: "Run every enabled chat channel of every core until interrupted", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			h, err := openServingHost(ctx, g, fakeScript)
			if err != nil {
				return err
			}
			defer closeHost(ctx, h)
			report, err := h.StartGateway(ctx, host.GatewayOptions{})
			if err != nil {
				return err
			}
			h.StartScheduler()
			if asJSON {
				if err := writeJSON(streams.Out, map[string]any{"channels": gatewayReportJSON(report)}); err != nil {
					return err
				}
			}
			writeGatewayReport(streams.Err, "demiurge gateway", report)
			fmt.Fprintf(streams.Err, "demiurge gateway: home %s; stop with Ctrl-C (turns in flight finish first)\n", h.Home().Dir)
			<-ctx.Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&fakeScript, "fake-script", "", "fake provider script (env DEMIURGE_FAKE_SCRIPT)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the channels started as JSON")
	status := &cobra.Command{
		Use: "status", Short: "Show every enabled channel, its state, last error and dead letters", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withHost(cmd.Context(), g, func(ctx context.Context, h *host.Host) error {
				st, err := h.GatewayStatus(ctx)
				if err != nil {
					return err
				}
				out := gatewayStatusJSON(st)
				if asJSON {
					return writeJSON(streams.Out, out)
				}
				writeGatewayStatus(streams.Out, out)
				return nil
			})
		},
	}
	status.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(status)
	return cmd
}

type gatewayChannelJSON struct {
	CoreID    string         `json:"core_id"`
	Name      string         `json:"name"`
	Type      string         `json:"type"`
	State     string         `json:"state"`
	LastError string         `json:"last_error"`
	HostID    string         `json:"host_id,omitempty"`
	UpdatedAt string         `json:"updated_at,omitempty"`
	Inbox     map[string]int `json:"inbox"`
}

type deadLetterJSON struct {
	InboundID       string `json:"inbound_id"`
	CoreID          string `json:"core_id"`
	Channel         string `json:"channel"`
	ConversationKey string `json:"conversation_key"`
	Attempts        int    `json:"attempts"`
	LastError       string `json:"last_error"`
	UpdatedAt       string `json:"updated_at"`
}

type gatewayStatusOut struct {
	Channels    []gatewayChannelJSON `json:"channels"`
	DeadLetters []deadLetterJSON     `json:"dead_letters"`
}

func gatewayStatusJSON(st host.GatewayStatus) gatewayStatusOut {
	out := gatewayStatusOut{Channels: []gatewayChannelJSON{}, DeadLetters: []deadLetterJSON{}}
	for _, c := range st.Channels {
		j := gatewayChannelJSON{CoreID: c.CoreID, Name: c.Name, Type: c.Type, State: c.State, LastError: c.LastError,
			HostID: c.HostID, Inbox: c.Inbox}
		if !c.UpdatedAt.IsZero() {
			j.UpdatedAt = demiurge.FormatTime(c.UpdatedAt)
		}
		out.Channels = append(out.Channels, j)
	}
	for _, d := range st.DeadLetters {
		out.DeadLetters = append(out.DeadLetters, deadLetterJSON{InboundID: d.ID, CoreID: d.CoreID, Channel: d.Channel,
			ConversationKey: d.ConversationKey, Attempts: d.Attempts, LastError: d.LastError, UpdatedAt: demiurge.FormatTime(d.UpdatedAt)})
	}
	return out
}

func gatewayReportJSON(report []host.GatewayChannel) []map[string]any {
	out := []map[string]any{}
	for _, r := range report {
		m := map[string]any{"core_id": r.CoreID, "name": r.Name, "type": r.Type, "state": demiurge.ChannelRunning, "error": nil}
		if r.Err != nil {
			m["state"], m["error"] = demiurge.ChannelDisabled, demiurge.ErrorMessage(r.Err)
		}
		out = append(out, m)
	}
	return out
}

func writeGatewayReport(w io.Writer, prefix string, report []host.GatewayChannel) {
	for _, r := range report {
		if r.Err != nil {
			fmt.Fprintf(w, "%s: %s/%s (%s) disabled: %s\n", prefix, r.CoreID, r.Name, r.Type, demiurge.ErrorMessage(r.Err))
			continue
		}
		fmt.Fprintf(w, "%s: %s/%s (%s) running\n", prefix, r.CoreID, r.Name, r.Type)
	}
}

func writeGatewayStatus(w io.Writer, st gatewayStatusOut) {
	if len(st.Channels) == 0 {
		fmt.Fprintln(w, "No channels are enabled.")
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CORE\tCHANNEL\tTYPE\tSTATE\tINBOX\tLAST ERROR")
		for _, c := range st.Channels {
			var inbox []string
			for _, k := range slices.Sorted(maps.Keys(c.Inbox)) {
				inbox = append(inbox, fmt.Sprintf("%s=%d", k, c.Inbox[k]))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.CoreID, c.Name, c.Type, c.State, orDash(strings.Join(inbox, " ")), orDash(c.LastError))
		}
		tw.Flush()
	}
	if len(st.DeadLetters) > 0 {
		fmt.Fprintln(w, "\nDead letters (newest first):")
		for _, d := range st.DeadLetters {
			fmt.Fprintf(w, "  %s %s/%s %s after %d attempt(s): %s\n", d.InboundID, d.CoreID, d.Channel, d.ConversationKey, d.Attempts, d.LastError)
		}
	}
}
