package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/demiurge/demiurge/turn"
)

// newCompactCmd is `demiurge sessions compact ID [--focus TEXT] [--json]`:
// the session's older history becomes one summary, its newest turns stay.
func newCompactCmd(g *globals, streams IO) *cobra.Command {
	var focus, providerFlag, model, fakeScript string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "compact ID",
		Short: "Summarise a session's older history with its own model",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			h, err := openHost(ctx, g, fakeScript)
			if err != nil {
				return err
			}
			defer closeHost(ctx, h)
			res, err := h.CompactSession(ctx, turn.CompactRequest{SessionID: args[0], Focus: focus, Provider: providerFlag, Model: model})
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(streams.Out, compactJSON{
					SessionID: res.SessionID, Skipped: res.Skipped, Reason: res.Reason,
					SummaryMessageID: res.SummaryMessageID, CompactedUntilMessageID: res.UntilMessageID,
					CompactedCount: res.Compacted, Chunks: res.Chunks, Summary: res.Summary,
				})
			}
			if res.Skipped {
				_, err = fmt.Fprintf(streams.Out, "session %s: %s\n", res.SessionID, res.Reason)
				return err
			}
			_, err = fmt.Fprintf(streams.Out, "session %s: %d messages compacted into %s (%d summarising requests); history now starts after %s\n",
				res.SessionID, res.Compacted, res.SummaryMessageID, res.Chunks, res.UntilMessageID)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&focus, "focus", "", "what the summary should keep in particular")
	fl.StringVar(&providerFlag, "provider", "", "provider (default: the session's, then the core's)")
	fl.StringVar(&model, "model", "", "model (default: the session's, then the core's)")
	fl.StringVar(&fakeScript, "fake-script", "", "fake provider script (env DEMIURGE_FAKE_SCRIPT)")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

type compactJSON struct {
	SessionID               string `json:"session_id"`
	Skipped                 bool   `json:"skipped"`
	Reason                  string `json:"reason,omitempty"`
	SummaryMessageID        string `json:"summary_message_id,omitempty"`
	CompactedUntilMessageID string `json:"compacted_until_message_id,omitempty"`
	CompactedCount          int    `json:"compacted_count"`
	Chunks                  int    `json:"chunks"`
	Summary                 string `json:"summary,omitempty"`
}
