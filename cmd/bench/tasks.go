package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/demiurge/demiurge/cmd/bench/internal/corebench"
	"github.com/demiurge/demiurge/cmd/bench/internal/mcpbench"
	"github.com/demiurge/demiurge/cmd/bench/internal/taskbench"
)

// Targets of the MCP figures.
const (
	discoveryRatioTarget = 1.5
	mcpCatalogTarget     = 5 * time.Millisecond
)

// mcpRows measures discovery of four healthy servers against the slowest
// alone, and catalog preparation for 4 connected servers × 50 tools.
func mcpRows(ctx context.Context, dir string, c counts) ([]row, error) {
	server, err := buildPackage(ctx, dir, mcpbench.TestServerPackage, "mcptestserver")
	if err != nil {
		return nil, err
	}
	d, err := mcpbench.MeasureDiscovery(ctx, server)
	if err != nil {
		return nil, err
	}
	med, p95, err := mcpbench.MeasureCatalog(ctx, server, max(c.turns, 20))
	if err != nil {
		return nil, err
	}
	return []row{
		{figure: figMCPDiscovery + ", ratio", value: fmt.Sprintf("%.2f (%s vs %s)", d.Ratio, ms(d.Four), ms(d.Slowest)), target: fmt.Sprintf("≤ %g", discoveryRatioTarget), verdict: check(d.Ratio <= discoveryRatioTarget)},
		{figure: figMCPCatalog + ", median", value: ms(med), target: fmt.Sprintf("≤ %g ms", float64(mcpCatalogTarget)/float64(time.Millisecond)), verdict: check(med <= mcpCatalogTarget)},
		{figure: figMCPCatalog + ", p95", value: ms(p95)},
	}, nil
}

// Targets of the core repository figures.
const (
	saveTarget   = 50 * time.Millisecond
	reviewTarget = 500 * time.Millisecond
)

// taskRows measures the task worker: submit-to-succeeded throughput, the
// latency from a task's end to its completion handler, and bounded logs.
func taskRows(ctx context.Context, dir string, c counts) ([]row, error) {
	n := max(c.turns*10, 500)
	tps, err := taskbench.MeasureThroughput(ctx, dir+"-throughput", n)
	if err != nil {
		return nil, err
	}
	lat, err := taskbench.MeasureCompletionLatency(ctx, dir+"-latency", max(c.turns/2, 20))
	if err != nil {
		return nil, err
	}
	ratio, rows, tailOK, err := taskbench.MeasureLogScaling(ctx, dir+"-logs")
	if err != nil {
		return nil, err
	}
	return []row{
		{figure: figTaskThroughput, value: fmt.Sprintf("%.0f tasks/s", tps), target: fmt.Sprintf("≥ %d tasks/s", taskbench.ThroughputTarget), verdict: check(tps >= taskbench.ThroughputTarget)},
		{figure: figCompletion + ", median", value: ms(lat), target: fmt.Sprintf("≤ %g ms", float64(taskbench.CompletionLatencyTarget)/float64(time.Millisecond)), verdict: check(lat <= taskbench.CompletionLatencyTarget)},
		{figure: figTaskLogs + ", time(100k)/time(10k)", value: fmt.Sprintf("%.1f", ratio), target: fmt.Sprintf("≤ %d", taskbench.LogScalingTarget), verdict: check(ratio <= taskbench.LogScalingTarget)},
		{figure: figTaskLogs + ", rows kept", value: fmt.Sprintf("%d", rows), target: "≤ 4000, tail newest", verdict: check(rows <= 4000 && tailOK)},
	}, nil
}

// coreRepoRows measures saving a one-file edit of a 500-file core and
// reviewing a 20-file proposal with every gate.
func coreRepoRows(ctx context.Context, dir string) ([]row, error) {
	for _, d := range []string{dir + "-save", dir + "-review"} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	save, err := corebench.MeasureSave(ctx, dir+"-save", 500)
	if err != nil {
		return nil, err
	}
	review, err := corebench.MeasureReview(ctx, dir+"-review", 20)
	if err != nil {
		return nil, err
	}
	return []row{
		{figure: figCoreSave + ", median", value: ms(save), target: fmt.Sprintf("≤ %g ms", float64(saveTarget)/float64(time.Millisecond)), verdict: check(save <= saveTarget)},
		{figure: figCoreReview + ", median", value: ms(review), target: fmt.Sprintf("≤ %g ms", float64(reviewTarget)/float64(time.Millisecond)), verdict: check(review <= reviewTarget)},
	}, nil
}
