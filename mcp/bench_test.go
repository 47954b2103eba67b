package mcp_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/demiurge/demiurge/mcp"
)

// TestMeasurements runs the benchmark measurements once as a smoke test;
// the bench driver compares them with their targets. The bounds here are
// loose on purpose: they catch a serialised discovery or a catalog that
// reconnects, not a slow machine.
func TestMeasurements(t *testing.T) {
	requireLinux(t)
	if testing.Short() {
		t.Skip("spawns 40 servers")
	}
	ctx := context.Background()
	f, err := mcp.MeasureDiscovery(ctx, testServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("discovery: four %s, slowest alone %s, ratio %.2f", f.Four, f.Slowest, f.Ratio)
	if f.Ratio > 2.5 || f.Slowest < 300*time.Millisecond {
		t.Fatalf("discovery figures %+v", f)
	}
	med, p95, err := mcp.MeasureCatalog(ctx, testServer(t), 50)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("catalog preparation (4 servers x 50 tools, cached): median %s, p95 %s", med, p95)
	if med > 50*time.Millisecond {
		t.Fatalf("catalog preparation median %s: connections not reused?", med)
	}
}

// BenchmarkCatalogPreparation prepares the catalog of four connected
// servers with 50 tools each b.N times (connections cached) and reports
// the median and 95th percentile.
func BenchmarkCatalogPreparation(b *testing.B) {
	requireLinuxB(b)
	med, p95, err := mcp.MeasureCatalog(context.Background(), testServer(b), b.N)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(med.Microseconds()), "median-µs")
	b.ReportMetric(float64(p95.Microseconds()), "p95-µs")
}

// BenchmarkDiscovery reports the four-servers-at-once over slowest-alone
// ratio of MeasureDiscovery.
func BenchmarkDiscovery(b *testing.B) {
	requireLinuxB(b)
	for b.Loop() {
		f, err := mcp.MeasureDiscovery(context.Background(), testServer(b))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(f.Ratio, "ratio")
	}
}

func requireLinuxB(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("stdio MCP servers need Linux")
	}
}
