package procbench

import (
	"context"
	"testing"
	"time"
)

// BenchmarkDrain256MiB drains `head -c 256MiB /dev/zero` through tails,
// redaction and artifacts and compares with `cat` of the same bytes into
// /dev/null. Targets: ratio ≥ 0.5, RSS growth ≤ 32 MiB.
func BenchmarkDrain256MiB(b *testing.B) {
	var ratio, host, cat, rss float64
	n := 0
	for b.Loop() {
		r, h, c, g, err := MeasureDrainRatio(context.Background(), b.TempDir(), 256<<20, nil)
		if err != nil {
			b.Fatal(err)
		}
		ratio, host, cat, rss = ratio+r, host+h, cat+c, max(rss, g)
		n++
	}
	b.ReportMetric(ratio/float64(n), "ratio")
	b.ReportMetric(host/float64(n), "host-MB/s")
	b.ReportMetric(cat/float64(n), "cat-MB/s")
	b.ReportMetric(rss, "rss-growth-MiB")
}

// BenchmarkKillLatency measures the time from a timeout to a TERM-ignoring
// tree (with a setsid grandchild) being gone. Target ≤ 400 ms.
func BenchmarkKillLatency(b *testing.B) {
	var total, worst time.Duration
	n := 0
	for b.Loop() {
		d, err := MeasureKillLatency(context.Background(), nil)
		if err != nil {
			b.Fatal(err)
		}
		total += d
		worst = max(worst, d)
		n++
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(n), "ms/kill")
	b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
}
