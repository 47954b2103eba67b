package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/demiurge/demiurge/cmd/bench/internal/procbench"
	"github.com/demiurge/demiurge/sandbox"
	"github.com/demiurge/demiurge/urlpolicy"
)

// Targets of the terminal and network figures.
const (
	drainRatioTarget = 0.5
	drainRSSTarget   = 32.0 // MiB
	killTarget       = 400 * time.Millisecond
	urlTarget        = 2 * time.Microsecond
)

// spawnOverheadTarget bounds what the sandbox adds to a command's start.
const spawnOverheadTarget = 15 * time.Millisecond

// benchSandbox is the sandbox the terminal figures run in: the default
// profile, with a workspace of its own.
func benchSandbox(dir string) (*sandbox.Policy, error) {
	ws := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return nil, err
	}
	p := sandbox.Profile{}.Policy(ws)
	return &p, nil
}

// spawnRows measures `true`, spawn to exit, with and without the sandbox,
// alternately in one run.
func spawnRows(ctx context.Context, dir string, c counts) ([]row, error) {
	box, err := benchSandbox(dir)
	if err != nil {
		return nil, err
	}
	plain, boxed, err := procbench.MeasureSpawn(ctx, *box, max(c.runs, 5))
	if err != nil {
		return nil, err
	}
	p, b := summarize(plain), summarize(boxed)
	delta := b.median - p.median
	return []row{
		{figure: figSpawn + ", sandboxed − unsandboxed median", value: ms(delta), target: "≤ " + ms(spawnOverheadTarget), verdict: check(delta <= spawnOverheadTarget)},
		{figure: figSpawn + ", unsandboxed median", value: ms(p.median)},
		{figure: figSpawn + ", sandboxed median", value: ms(b.median)},
	}, nil
}

// drainRows measures a command writing 256 MiB to stdout through tails,
// artifact and redaction, against `cat` of the same bytes into /dev/null,
// inside the sandbox; beside them, the same bytes written to a file on the
// artifacts' disk and synced, which bounds what any drain that keeps its
// artifact can reach there.
func drainRows(ctx context.Context, dir string) ([]row, error) {
	box, err := benchSandbox(dir)
	if err != nil {
		return nil, err
	}
	ratio, host, cat, rss, err := procbench.MeasureDrainRatio(ctx, dir, 256<<20, box)
	if err != nil {
		return nil, err
	}
	synced, err := procbench.MeasureSyncedWrite(filepath.Join(dir, "synced"), 256<<20)
	if err != nil {
		return nil, err
	}
	discovery, err := procbench.MeasureOutputDiscovery(64 << 20)
	if err != nil {
		return nil, err
	}
	return []row{
		{figure: figDrain + ", ratio to cat", value: fmt.Sprintf("%.2f", ratio), target: fmt.Sprintf("≥ %g", drainRatioTarget), verdict: check(ratio >= drainRatioTarget)},
		{figure: figDrain + ", Host", value: fmt.Sprintf("%.0f MB/s", host)},
		{figure: figDrain + ", cat", value: fmt.Sprintf("%.0f MB/s", cat)},
		{figure: figDrain + ", the same bytes written to a file and synced, no pipe", value: fmt.Sprintf("%.0f MB/s", synced)},
		{figure: figDrain + ", Host RSS growth", value: fmt.Sprintf("%.1f MiB", rss), target: fmt.Sprintf("≤ %g MiB", drainRSSTarget), verdict: check(rss <= drainRSSTarget)},
		{figure: figDiscovery, value: fmt.Sprintf("%.0f MB/s", discovery)},
	}, nil
}

// killRows measures the time from a timeout to a TERM-ignoring tree
// (setsid grandchild included) being gone and reaped, inside the sandbox.
func killRows(ctx context.Context, dir string, c counts) ([]row, error) {
	box, err := benchSandbox(dir)
	if err != nil {
		return nil, err
	}
	n := max(c.runs/4, 3)
	samples := make([]time.Duration, 0, n)
	for range n {
		d, err := procbench.MeasureKillLatency(ctx, box)
		if err != nil {
			return nil, err
		}
		samples = append(samples, d)
	}
	return timedRows(figKill, samples, killTarget), nil
}

// urlRows measures the URL policy's verdict for a literal address.
func urlRows(c counts) ([]row, error) {
	p := urlpolicy.Policy{}
	addrs := []netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("::ffff:127.0.0.1")}
	const batch = 1000
	samples := make([]time.Duration, 0, c.turns)
	for range c.turns {
		start := time.Now()
		for i := range batch {
			p.CheckAddr(addrs[i%len(addrs)])
		}
		samples = append(samples, time.Since(start)/batch)
	}
	s := summarize(samples)
	return []row{{figure: figURL + ", median", value: fmt.Sprintf("%.0f ns", float64(s.median)), target: fmt.Sprintf("≤ %g µs", float64(urlTarget)/float64(time.Microsecond)), verdict: check(s.median <= urlTarget)}}, nil
}
