package corebench

import (
	"context"
	"testing"
	"time"
)

// The targets of issue 7: a one-file save on a 500-file core within
// 50 ms, a 20-file review within 500 ms, and EnsureSaved without edits in
// a few milliseconds.

func TestPerformanceTargets(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing test: not under -short or the race detector")
	}
	ctx := context.Background()
	cases := []struct {
		name    string
		measure func() (time.Duration, error)
		target  time.Duration
	}{
		{"save 1 file of 500", func() (time.Duration, error) { return MeasureSave(ctx, t.TempDir(), 500) }, 50 * time.Millisecond},
		{"review 20 files", func() (time.Duration, error) { return MeasureReview(ctx, t.TempDir(), 20) }, 500 * time.Millisecond},
		{"ensure saved, clean, 500 files", func() (time.Duration, error) { return MeasureEnsureSaved(ctx, t.TempDir(), 500) }, 20 * time.Millisecond},
	}
	for _, tc := range cases {
		d, err := tc.measure()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		t.Logf("%s: median %v (target %v)", tc.name, d, tc.target)
		// Generous under -race and on loaded machines: fail only at 4x.
		if d > 4*tc.target {
			t.Errorf("%s: median %v, target %v", tc.name, d, tc.target)
		}
	}
}

func BenchmarkSave500(b *testing.B) {
	for b.Loop() {
		d, err := MeasureSave(context.Background(), b.TempDir(), 500)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(d.Microseconds())/1000, "ms/save")
	}
}

func BenchmarkReview20(b *testing.B) {
	for b.Loop() {
		d, err := MeasureReview(context.Background(), b.TempDir(), 20)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(d.Microseconds())/1000, "ms/review")
	}
}

func BenchmarkEnsureSavedClean(b *testing.B) {
	r, _, err := benchHome(context.Background(), b.TempDir(), 500)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := r.EnsureSaved(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
