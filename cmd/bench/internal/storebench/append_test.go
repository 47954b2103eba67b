package storebench

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/demiurge/demiurge/store"
)

func benchDB(b *testing.B) (*store.DB, string, string) {
	path := filepath.Join(b.TempDir(), "bench.sqlite3")
	db, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	sid, err := benchSession(context.Background(), db)
	if err != nil {
		b.Fatal(err)
	}
	return db, sid, path
}

// BenchmarkAppend100 appends batches of 100 turn-shaped events with their
// projections.
func BenchmarkAppend100(b *testing.B) {
	db, sid, _ := benchDB(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		batch := benchBatch(sid)
		b.StartTimer()
		if _, err := db.Append(ctx, batch, "", nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*BenchBatchSize)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkRawInsert100 inserts the same event rows without projections.
func BenchmarkRawInsert100(b *testing.B) {
	_, sid, path := benchDB(b)
	ctx := context.Background()
	raw, err := openRaw(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.close()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		batch := benchBatch(sid)
		b.StartTimer()
		if err := raw.insert(ctx, batch, ""); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*BenchBatchSize)/b.Elapsed().Seconds(), "events/s")
}

func TestMeasureAppendRatio(t *testing.T) {
	ratio, a, r, err := MeasureAppendRatio(context.Background(), t.TempDir(), 10)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("append %.0f events/s, raw %.0f events/s, ratio %.2f", a, r, ratio)
	if ratio <= 0 || a <= 0 || r <= 0 {
		t.Fatalf("ratio %v, append %v, raw %v: want positive rates", ratio, a, r)
	}
}
