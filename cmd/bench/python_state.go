package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/demiurge/demiurge/coregate"
	"github.com/demiurge/demiurge/corerepo"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/turn"
)

// pythonStateTarget is the ctx.state.session.set round trip target (issue 16).
const pythonStateTarget = time.Millisecond

// pythonStateSlot times each ctx.state.session.set from Python (the call
// to the Host and back, the turn's state copy and the recorded event) and
// reports the samples, in seconds, as one progress delivery.
const pythonStateSlot = `import json, time

def process(ctx):
    ctx.input.add_context(ctx.input.raw_text, role="user")
    warm, n = %d, %d
    samples = []
    for i in range(warm + n):
        t0 = time.perf_counter()
        ctx.state.session.set("bench.counter", i)
        if i >= warm:
            samples.append(time.perf_counter() - t0)
    if ctx.state.session.get("bench.counter") != warm + n - 1:
        raise RuntimeError("the last set is not visible")
    ctx.input.progress("samples " + json.dumps(samples))
`

// pythonStateRows runs one turn of a home whose module.py input slot sets
// session state in a loop, through the Host as a turn runs it.
func pythonStateRows(ctx context.Context, dir string, c counts) ([]row, error) {
	if _, err := host.Init(dir, ""); err != nil {
		return nil, err
	}
	slot := filepath.Join(dir, "agents", "assistant", "agent", "input", "base_input")
	if err := os.Remove(filepath.Join(slot, "module.star")); err != nil {
		return nil, err
	}
	n := max(50, 20*c.turns)
	if err := os.WriteFile(filepath.Join(slot, "module.py"), fmt.Appendf(nil, pythonStateSlot, 20, n), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(slot, "slot.yaml"), []byte("failure_policy: hard\ncapabilities: [state.session.read, state.session.write]\n"), 0o600); err != nil {
		return nil, err
	}
	if err := confirmedSave(ctx, dir); err != nil {
		return nil, err
	}
	h, err := host.Open(ctx, host.Options{Home: dir, Getenv: func(string) string { return "" }})
	if err != nil {
		return nil, fmt.Errorf("open host: %w", err)
	}
	defer h.Close(context.WithoutCancel(ctx))
	res, err := h.Run(ctx, turn.Request{Text: "state bench", NewSession: true})
	if err != nil {
		return nil, err
	}
	if res.Outcome != turn.OutcomeCompleted {
		return nil, fmt.Errorf("state bench turn: outcome %q (%v)", res.Outcome, res.Error)
	}
	for _, d := range res.Deliveries {
		raw, ok := strings.CutPrefix(d.Text, "samples ")
		if !ok {
			continue
		}
		var secs []float64
		if err := json.Unmarshal([]byte(raw), &secs); err != nil {
			return nil, fmt.Errorf("state bench samples: %w", err)
		}
		samples := make([]time.Duration, len(secs))
		for i, s := range secs {
			samples[i] = time.Duration(s * float64(time.Second))
		}
		return timedRows(figPythonState, samples, pythonStateTarget), nil
	}
	return nil, fmt.Errorf("state bench: the slot reported no samples (deliveries %+v)", res.Deliveries)
}

// confirmedSave saves the local edits of a home as the operator does,
// confirming the grants they add.
func confirmedSave(ctx context.Context, home string) error {
	repo, err := host.OpenRepo(ctx, home, nil)
	if err != nil {
		return err
	}
	defer repo.Close()
	_, err = repo.Save(ctx, corerepo.SaveOptions{Reason: "bench"})
	var ge *coregate.GateError
	if errors.As(err, &ge) && ge.Token != "" {
		_, err = repo.Save(ctx, corerepo.SaveOptions{Reason: "bench", Confirm: ge.Token})
	}
	return err
}
