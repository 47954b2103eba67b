package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
	"github.com/demiurge/demiurge/host"
)

// newTasksCmd is the operator's view of the task ledger: every task of the
// home (the operator sees all owners), with logs and metadata.
func newTasksCmd(g *globals, streams IO) *cobra.Command {
	cmd := &cobra.Command{Use: "tasks", Short: "List, inspect, cancel and wait for background tasks"}
	var asJSON, all bool
	var limit int
	list := &cobra.Command{
		Use:   "list",
		Short: "List active tasks (--all: finished ones too), newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withHost(cmd.Context(), g, func(ctx context.Context, h *host.Host) error {
				tasks, err := h.ListTasks(ctx, all, limit)
				if err != nil {
					return err
				}
				out := []taskJSON{}
				for _, t := range tasks {
					out = append(out, toTaskJSON(t, ""))
				}
				if err := fillHostnames(ctx, h, out); err != nil {
					return err
				}
				if asJSON {
					return writeJSON(streams.Out, out)
				}
				writeTaskTable(streams.Out, out)
				return nil
			})
		},
	}
	list.Flags().BoolVar(&all, "all", false, "include finished tasks")
	list.Flags().IntVar(&limit, "limit", 50, "with --all: how many of the newest tasks")

	status := taskCmd(g, streams, &asJSON, "status ID", "Show one task with its summary, metadata and log tail", func(ctx context.Context, h *host.Host, id string) (any, error) {
		v, err := h.TaskStatus(ctx, id)
		if err != nil {
			return nil, err
		}
		j := toOperatorJSON(v)
		j.taskJSON, err = withHostname(ctx, h, j.taskJSON)
		return j, err
	})
	var tail int
	logs := taskCmd(g, streams, &asJSON, "logs ID", "Print the newest log lines of a task", func(ctx context.Context, h *host.Host, id string) (any, error) {
		lines, err := h.TaskLog(ctx, id, tail)
		if err != nil {
			return nil, err
		}
		return logLinesJSON(lines), nil
	})
	logs.Flags().IntVar(&tail, "tail", 200, "how many of the newest lines")
	cancel := taskCmd(g, streams, &asJSON, "cancel ID", "Cancel a task (a finished task is shown unchanged)", func(ctx context.Context, h *host.Host, id string) (any, error) {
		t, err := h.CancelTask(ctx, id)
		if err != nil {
			return nil, err
		}
		return withHostname(ctx, h, toTaskJSON(t, ""))
	})
	var waitTimeout time.Duration
	wait := taskCmd(g, streams, &asJSON, "wait ID", "Wait until a task finishes and show it", func(ctx context.Context, h *host.Host, id string) (any, error) {
		if waitTimeout > 0 {
			var stop context.CancelFunc
			ctx, stop = context.WithTimeout(ctx, waitTimeout)
			defer stop()
		}
		t, err := h.WaitTask(ctx, id)
		switch {
		case err == nil:
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, demiurge.Errorf(demiurge.ETIMEOUT, "task %s did not finish within %s", id, waitTimeout)
		case ctx.Err() != nil:
			return nil, demiurge.Errorf(demiurge.ECANCELED, "waiting for task %s was interrupted", id)
		default:
			return nil, err
		}
		return withHostname(ctx, h, toTaskJSON(t, ""))
	})
	wait.Flags().DurationVar(&waitTimeout, "timeout", 0, "give up after this long (0: wait as long as it runs)")

	for _, c := range []*cobra.Command{list, status, logs, cancel, wait} {
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	}
	cmd.AddCommand(list, status, logs, cancel, wait)
	return cmd
}

// taskCmd builds a subcommand over one task id that prints fn's result as
// text, or as JSON when *asJSON is set at run time.
func taskCmd(g *globals, streams IO, asJSON *bool, use, short string, fn func(context.Context, *host.Host, string) (any, error)) *cobra.Command {
	return &cobra.Command{
		Use: use, Short: short, Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHost(cmd.Context(), g, func(ctx context.Context, h *host.Host) error {
				v, err := fn(ctx, h, args[0])
				if err != nil {
					return err
				}
				return printTaskResult(streams.Out, v, *asJSON)
			})
		},
	}
}

// withHost opens the Host, runs fn and closes it.
func withHost(ctx context.Context, g *globals, fn func(context.Context, *host.Host) error) error {
	h, err := openHost(ctx, g, "")
	if err != nil {
		return err
	}
	defer closeHost(ctx, h)
	return fn(ctx, h)
}

type taskJSON struct {
	TaskID         string `json:"task_id"`
	Kind           string `json:"kind"`
	Status         string `json:"status"`
	Running        bool   `json:"running"`
	CoreID         string `json:"core_id"`
	OwnerSessionID string `json:"owner_session_id"`
	OwnerTurnID    string `json:"owner_turn_id"`
	ParentTaskID   string `json:"parent_task_id,omitempty"`
	HostID         string `json:"host_id"`
	// Hostname is the machine of the Host that runs (or ran) the task,
	// while the ledger still knows it (a stopped Host for a day): "" else.
	Hostname     string         `json:"hostname"`
	NotifyPolicy string         `json:"notify_policy"`
	ResultRef    string         `json:"result_ref"`
	Summary      string         `json:"summary"`
	Error        map[string]any `json:"error,omitempty"`
	CreatedAt    string         `json:"created_at"`
	StartedAt    string         `json:"started_at"`
	CompletedAt  string         `json:"completed_at"`
}

func toTaskJSON(t demiurge.Task, summary string) taskJSON {
	j := taskJSON{
		TaskID: t.ID, Kind: t.Kind, Status: t.Status, Running: demiurge.TaskActive(t.Status), CoreID: t.CoreID,
		OwnerSessionID: t.OwnerSessionID, OwnerTurnID: t.OwnerTurnID, ParentTaskID: t.ParentTaskID,
		HostID: t.HostID, NotifyPolicy: t.NotifyPolicy, ResultRef: t.ResultRef, Summary: summary,
		CreatedAt: demiurge.FormatTime(t.CreatedAt), StartedAt: demiurge.FormatTime(t.StartedAt),
		CompletedAt: demiurge.FormatTime(t.CompletedAt),
	}
	if len(t.Error) > 0 {
		j.Error = t.Error
	}
	return j
}

type operatorJSON struct {
	taskJSON
	Source map[string]any `json:"source"`
	Logs   []logLineJSON  `json:"log_tail"`
}

type logLineJSON struct {
	Seq    int64  `json:"seq"`
	Stream string `json:"stream"`
	Text   string `json:"text"`
}

func toOperatorJSON(v controlplane.OperatorView) operatorJSON {
	return operatorJSON{taskJSON: toTaskJSON(v.Task, v.Summary), Source: v.Task.Source, Logs: logLinesJSON(v.Logs)}
}

func logLinesJSON(lines []controlplane.LogLine) []logLineJSON {
	out := make([]logLineJSON, 0, len(lines))
	for _, l := range lines {
		out = append(out, logLineJSON{Seq: l.Seq, Stream: l.Stream, Text: l.Text})
	}
	return out
}

func printTaskResult(w io.Writer, v any, asJSON bool) error {
	if asJSON {
		return writeJSON(w, v)
	}
	switch x := v.(type) {
	case taskJSON:
		writeTaskTable(w, []taskJSON{x})
	case operatorJSON:
		writeTaskTable(w, []taskJSON{x.taskJSON})
		if x.Summary != "" {
			fmt.Fprintf(w, "\nsummary:\n%s\n", x.Summary)
		}
		if len(x.Logs) > 0 {
			fmt.Fprintln(w, "\nlog tail:")
			for _, l := range x.Logs {
				fmt.Fprintln(w, l.Text)
			}
		}
	case []logLineJSON:
		for _, l := range x {
			fmt.Fprintln(w, l.Text)
		}
	default:
		return writeJSON(w, v)
	}
	return nil
}

func writeTaskTable(w io.Writer, tasks []taskJSON) {
	if len(tasks) == 0 {
		fmt.Fprintln(w, "No tasks.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tKIND\tSTATUS\tCORE\tSESSION\tHOST\tCREATED")
	for _, t := range tasks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.TaskID, t.Kind, t.Status, t.CoreID, t.OwnerSessionID, hostText(t), t.CreatedAt)
	}
	tw.Flush()
}

// hostText is the HOST column: the Host's id and its machine.
func hostText(t taskJSON) string {
	switch {
	case t.HostID == "":
		return "-"
	case t.Hostname == "":
		return t.HostID
	}
	return t.HostID + "@" + t.Hostname
}

// withHostname is t with its Hostname set.
func withHostname(ctx context.Context, h *host.Host, t taskJSON) (taskJSON, error) {
	one := []taskJSON{t}
	err := fillHostnames(ctx, h, one)
	return one[0], err
}

// fillHostnames sets the Hostname of each task from the ledger's hosts
// table, in one read.
func fillHostnames(ctx context.Context, h *host.Host, tasks []taskJSON) error {
	ids := make([]string, 0, len(tasks))
	for _, t := range tasks {
		ids = append(ids, t.HostID)
	}
	names, err := h.HostNames(ctx, ids)
	if err != nil {
		return err
	}
	for i := range tasks {
		tasks[i].Hostname = names[tasks[i].HostID]
	}
	return nil
}
