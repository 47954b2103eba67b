package main

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/demiurge/demiurge/cmd/bench/internal/tuibench"
)

// tuiRows measures the terminal UI through a pseudo-terminal: keystroke
// to frame under a 10,000-line transcript and the idle CPU after it, then
// the resident memory with a 10,000-message session open.
func tuiRows(ctx context.Context, bin, dir string, c counts) ([]row, error) {
	keyTarget := fmt.Sprintf("≤ %g ms", float64(tuibench.KeystrokeTarget)/float64(time.Millisecond))
	cpuTarget := fmt.Sprintf("< %g %% of a core", tuibench.IdleCPUTarget)
	rssTarget := fmt.Sprintf("≤ %g MiB", tuibench.RSSTarget)
	if runtime.GOOS != "linux" {
		na := "n/a (needs Linux)"
		return []row{
			{figure: figKeystroke + ", median", value: na, target: keyTarget},
			{figure: figTUIIdle, value: na, target: cpuTarget},
			{figure: figTUIMemory + ", VmRSS", value: na, target: rssTarget},
		}, nil
	}
	k, err := tuibench.MeasureKeystrokes(ctx, bin, childEnv(), dir+"-keys", c.keys, c.tuiIdle)
	if err != nil {
		return nil, fmt.Errorf("keystrokes: %w", err)
	}
	m, err := tuibench.MeasureSessionRSS(ctx, bin, childEnv(), dir+"-session", tuibench.SessionMessages)
	if err != nil {
		return nil, fmt.Errorf("long session: %w", err)
	}
	rows := timedRows(figKeystroke, k.Samples, tuibench.KeystrokeTarget)
	return append(rows,
		row{figure: figTUIIdle, value: fmt.Sprintf("%.2f %% over %s, %d bytes drawn", k.IdleCPU, k.Idle, k.IdleOutput), target: cpuTarget, verdict: check(k.IdleCPU < tuibench.IdleCPUTarget)},
		row{figure: figTUIMemory + ", VmRSS", value: fmt.Sprintf("%.1f MiB", m.RSS), target: rssTarget, verdict: check(m.RSS <= tuibench.RSSTarget)},
		row{figure: figTUIMemory + ", peak (VmHWM)", value: fmt.Sprintf("%.1f MiB", m.HWM)},
	), nil
}
