package main

import (
	"context"
	"fmt"
	"time"

	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/turn"
)

// turnTarget is figure 1's limit on the median.
const turnTarget = 2 * time.Millisecond

// turnRows measures figure 1: the wall time of in-process turns with one
// tool call, on one Host over a fresh home in dir.
func turnRows(ctx context.Context, dir string, c counts) ([]row, error) {
	samples, err := measureTurns(ctx, dir, c.turnWarm, c.turns)
	if err != nil {
		return nil, err
	}
	return timedRows(figTurn, samples, turnTarget), nil
}

func measureTurns(ctx context.Context, dir string, warm, n int) (samples []time.Duration, err error) {
	// An empty environment keeps the provider the fake one whatever keys
	// the caller has set.
	h, err := host.Open(ctx, host.Options{Home: dir, Getenv: func(string) string { return "" }})
	if err != nil {
		return nil, fmt.Errorf("open host: %w", err)
	}
	defer func() {
		if cerr := h.Close(context.WithoutCancel(ctx)); cerr != nil && err == nil {
			err = fmt.Errorf("close host: %w", cerr)
		}
	}()
	req := turn.Request{Text: "please tools_list"}
	// The warm-up includes the first turn, which creates the session and
	// runs the bootstrap slots.
	for i := range max(warm, 1) {
		if _, err := toolTurn(ctx, h, req); err != nil {
			return nil, fmt.Errorf("warm-up turn %d: %w", i+1, err)
		}
	}
	samples = make([]time.Duration, 0, n)
	for i := range n {
		d, err := toolTurn(ctx, h, req)
		if err != nil {
			return nil, fmt.Errorf("turn %d: %w", i+1, err)
		}
		samples = append(samples, d)
	}
	return samples, nil
}

// toolTurn runs one turn and returns its wall time. It is an error unless
// the turn completed with exactly one successful tools_list call, so a
// regression that skips the tool cannot pass as a speed-up.
func toolTurn(ctx context.Context, h *host.Host, req turn.Request) (time.Duration, error) {
	start := time.Now()
	res, err := h.Run(ctx, req)
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if res.Outcome != turn.OutcomeCompleted {
		return 0, fmt.Errorf("outcome %q (%v), want %q", res.Outcome, res.Error, turn.OutcomeCompleted)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "tools_list" || res.ToolCalls[0].IsError {
		return 0, fmt.Errorf("tool calls %+v, want one successful tools_list", res.ToolCalls)
	}
	return d, nil
}
