package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/demiurge/demiurge"
)

func newSessionsCmd(g *globals, streams IO) *cobra.Command {
	cmd := &cobra.Command{Use: "sessions", Short: "List and show sessions"}
	var asJSON bool
	var limit int
	list := &cobra.Command{
		Use:   "list",
		Short: "List the newest sessions of the core",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := openHost(cmd.Context(), g, "")
			if err != nil {
				return err
			}
			defer closeHost(cmd.Context(), h)
			sessions, err := h.ListSessions(cmd.Context(), coreOr(g.core, h.DefaultCore()), limit)
			if err != nil {
				return err
			}
			if asJSON {
				out := make([]sessionJSON, 0, len(sessions))
				for _, s := range sessions {
					out = append(out, toSessionJSON(s))
				}
				return writeJSON(streams.Out, out)
			}
			writeSessionTable(streams.Out, sessions, "")
			return nil
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	list.Flags().IntVar(&limit, "limit", 20, "how many sessions (newest first)")

	var showJSON bool
	var showLimit int
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show a session and its newest messages",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := openHost(cmd.Context(), g, "")
			if err != nil {
				return err
			}
			defer closeHost(cmd.Context(), h)
			s, err := h.Session(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			msgs, err := h.Transcript(cmd.Context(), s.ID, showLimit)
			if err != nil {
				return err
			}
			usage, steps, err := h.SessionUsageSteps(cmd.Context(), s.ID)
			if err != nil {
				return err
			}
			if showJSON {
				out := struct {
					sessionJSON
					Usage    tokenUsageJSON `json:"usage"`
					Messages []messageJSON  `json:"messages"`
				}{sessionJSON: toSessionJSON(s), Usage: toUsageJSON(usage, steps), Messages: []messageJSON{}}
				for _, m := range msgs {
					out.Messages = append(out.Messages, toMessageJSON(m))
				}
				return writeJSON(streams.Out, out)
			}
			fmt.Fprintf(streams.Out, "session %s · core %s · %d messages · updated %s\n", s.ID, s.CoreID, s.MessageCount, demiurge.FormatTime(s.UpdatedAt))
			fmt.Fprintf(streams.Out, "usage: %s\n", usageLine(usage, steps))
			if s.CompactionSummaryID != "" {
				fmt.Fprintf(streams.Out, "compacted until %s (summary %s)\n", s.CompactedUntilMessageID, s.CompactionSummaryID)
			}
			for _, m := range msgs {
				if !m.Visible {
					continue
				}
				fmt.Fprintf(streams.Out, "\n[%s] %s\n", m.Role, m.Content.Text)
			}
			return nil
		},
	}
	show.Flags().BoolVar(&showJSON, "json", false, "print JSON")
	show.Flags().IntVar(&showLimit, "limit", 50, "how many of the newest messages")
	cmd.AddCommand(list, show, newTurnsCmd(g, streams), newCompactCmd(g, streams))
	return cmd
}

type sessionJSON struct {
	SessionID    string `json:"session_id"`
	CoreID       string `json:"core_id"`
	Status       string `json:"status"`
	Channel      string `json:"channel"`
	Title        string `json:"title"`
	Preview      string `json:"preview"`
	MessageCount int    `json:"message_count"`
	CoreRevision string `json:"core_revision"`
	CreatedAt    string `json:"created_at"`
	UpdatedAt    string `json:"updated_at"`
}

func toSessionJSON(s demiurge.Session) sessionJSON {
	return sessionJSON{SessionID: s.ID, CoreID: s.CoreID, Status: s.Status, Channel: s.Channel, Title: s.Title,
		Preview: s.Preview, MessageCount: s.MessageCount, CoreRevision: s.CoreRevision,
		CreatedAt: demiurge.FormatTime(s.CreatedAt), UpdatedAt: demiurge.FormatTime(s.UpdatedAt)}
}

type messageJSON struct {
	MessageID string `json:"message_id"`
	TurnID    string `json:"turn_id"`
	Role      string `json:"role"`
	Text      string `json:"text"`
	Visible   bool   `json:"visible"`
	CreatedAt string `json:"created_at"`
}

func toMessageJSON(m demiurge.Message) messageJSON {
	return messageJSON{MessageID: m.ID, TurnID: m.TurnID, Role: m.Role, Text: m.Content.Text, Visible: m.Visible, CreatedAt: demiurge.FormatTime(m.CreatedAt)}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func writeSessionTable(w io.Writer, sessions []demiurge.Session, current string) {
	if len(sessions) == 0 {
		fmt.Fprintln(w, "(no sessions)")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  SESSION\tMESSAGES\tUPDATED\tTITLE")
	for _, s := range sessions {
		mark := " "
		if s.ID == current {
			mark = "*"
		}
		fmt.Fprintf(tw, "%s %s\t%d\t%s\t%s\n", mark, s.ID, s.MessageCount, demiurge.FormatTime(s.UpdatedAt), s.Title)
	}
	tw.Flush()
}

// newTurnsCmd lists the newest turns of every session of the core, or of
// one session.
func newTurnsCmd(g *globals, streams IO) *cobra.Command {
	var asJSON bool
	var sessionID string
	var limit int
	cmd := &cobra.Command{
		Use:   "turns",
		Short: "List recent turns and their outcomes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			h, err := openHost(ctx, g, "")
			if err != nil {
				return err
			}
			defer closeHost(ctx, h)
			turns, err := h.ListTurns(ctx, coreOr(g.core, h.DefaultCore()), sessionID, limit)
			if err != nil {
				return err
			}
			out := []turnJSON{}
			var total demiurge.Usage
			var steps int64
			for _, tr := range turns {
				out = append(out, turnJSON{TurnID: tr.ID, SessionID: tr.SessionID, Status: string(tr.Status),
					CoreRevision: tr.CoreRevision, CreatedAt: demiurge.FormatTime(tr.CreatedAt), Error: tr.Error,
					Usage: toUsageJSON(tr.Usage, tr.ModelSteps)})
				total, steps = total.Add(tr.Usage), steps+tr.ModelSteps
			}
			if asJSON {
				return writeJSON(streams.Out, out)
			}
			tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TURN\tSESSION\tSTATUS\tCREATED\tIN\tOUT\tCACHED")
			for _, tr := range out {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\n", tr.TurnID, tr.SessionID, tr.Status, tr.CreatedAt,
					tr.Usage.InputTokens, tr.Usage.OutputTokens, tr.Usage.CachedTokens)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			_, err = fmt.Fprintf(streams.Out, "total: %s\n", usageLine(total, steps))
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&sessionID, "session", "", "only this session")
	cmd.Flags().IntVar(&limit, "limit", 50, "turns per session (newest first)")
	return cmd
}

type turnJSON struct {
	TurnID       string         `json:"turn_id"`
	SessionID    string         `json:"session_id"`
	Status       string         `json:"status"`
	CoreRevision string         `json:"core_revision"`
	CreatedAt    string         `json:"created_at"`
	Error        map[string]any `json:"error,omitempty"`
	Usage        tokenUsageJSON `json:"usage"`
}

// tokenUsageJSON is the provider usage of a turn or session.
type tokenUsageJSON struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	CachedTokens int64 `json:"cached_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
	Steps        int64 `json:"steps"`
}

func toUsageJSON(u demiurge.Usage, steps int64) tokenUsageJSON {
	return tokenUsageJSON{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CachedTokens: u.CachedTokens,
		TotalTokens: u.InputTokens + u.OutputTokens, Steps: steps}
}

func usageLine(u demiurge.Usage, steps int64) string {
	return fmt.Sprintf("%d input tokens (%d cached), %d output tokens, %d model steps", u.InputTokens, u.CachedTokens, u.OutputTokens, steps)
}
