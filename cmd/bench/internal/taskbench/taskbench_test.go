package taskbench_test

import (
	"context"
	"testing"

	"github.com/demiurge/demiurge/cmd/bench/internal/taskbench"
	"github.com/demiurge/demiurge/store"
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

// TestTaskLogScalingKeepsTheTail runs the bench driver's workload (10,000
// then 100,000 lines) for what it promises beyond time: the persisted rows
// stay bounded and the kept tail ends on the newest line. The time ratio
// is the bench table's figure, not a unit test's.
func TestTaskLogScalingKeepsTheTail(t *testing.T) {
	if testing.Short() || logScalingUnderRace {
		t.Skip("appends 110,000 lines; slow under -race")
	}
	_, rows, tailOK, err := taskbench.MeasureLogScaling(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if rows > store.DefaultTaskLogLines || !tailOK {
		t.Fatalf("rows %d (want ≤ %d), tail ok %v", rows, store.DefaultTaskLogLines, tailOK)
	}
}
