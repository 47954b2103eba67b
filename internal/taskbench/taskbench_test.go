package taskbench_test

import (
	"context"
	"testing"

	"github.com/demiurge/demiurge/internal/taskbench"
)

// The measurements run and report plausible figures; the targets are the
// bench driver's to judge (the race detector slows everything tenfold).
func TestMeasurements(t *testing.T) {
	ctx := context.Background()
	rate, err := taskbench.MeasureThroughput(ctx, t.TempDir(), 300)
	if err != nil || rate <= 0 {
		t.Fatalf("throughput %.0f tasks/s, %v", rate, err)
	}
	median, err := taskbench.MeasureCompletionLatency(ctx, t.TempDir(), 10)
	if err != nil || median <= 0 {
		t.Fatalf("completion latency %s, %v", median, err)
	}
	t.Logf("throughput %.0f tasks/s (target %d), completion latency median %s (target %s)",
		rate, taskbench.ThroughputTarget, median, taskbench.CompletionLatencyTarget)
}

func BenchmarkSubmitToSucceeded(b *testing.B) {
	rate, err := taskbench.MeasureThroughput(context.Background(), b.TempDir(), max(b.N, 100))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(rate, "tasks/s")
}

func BenchmarkCompletionLatency(b *testing.B) {
	median, err := taskbench.MeasureCompletionLatency(context.Background(), b.TempDir(), max(b.N, 20))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(median.Microseconds())/1000, "ms-median")
}
