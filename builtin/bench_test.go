package builtin_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The benchmarks report, besides ns/op and B/op, the median and 95th
// percentile of one call and, on Linux, the growth of the process's peak
// RSS over the run (VmHWM after the run minus VmRSS before it, the peak
// being reset first through /proc/self/clear_refs), so that a driver can
// check that memory does not follow file size.

const gib = 1 << 30

func BenchmarkReadFileWindow1GiB(b *testing.B) {
	e := newEnv(b)
	f, err := os.Create(e.path("huge.bin"))
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Truncate(gib); err != nil {
		b.Skipf("sparse file: %v", err)
	}
	f.Close()
	read := e.invoker("read_file")
	args := map[string]any{"path": "huge.bin", "limit": 20000}
	measure(b, func() {
		out, err := read(context.Background(), args)
		if err != nil || out.IsError || out.Data["end"] != int64(20000) {
			b.Fatalf("read_file: %v %q", err, firstN(out.Content, 200))
		}
	})
}

func BenchmarkSearchFiles1GiB(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 1 GiB (sparse) tree")
	}
	e := newEnv(b)
	// 64 files of 16 MiB: 256 KiB of text lines, then a hole.
	const files, size, text = 64, 16 << 20, 256 << 10
	var line strings.Builder
	for i := 0; line.Len() < text; i++ {
		fmt.Fprintf(&line, "line %d of some searchable text in a large file\n", i)
	}
	for i := 0; i < files; i++ {
		p := e.path(filepath.Join("tree", strconv.Itoa(i%8), fmt.Sprintf("f%02d.txt", i)))
		mkdir(b, filepath.Dir(p))
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.WriteString(line.String()[:text]); err != nil {
			b.Fatal(err)
		}
		if err := f.Truncate(size); err != nil {
			b.Skipf("sparse file: %v", err)
		}
		f.Close()
	}
	search := e.invoker("search_files")
	args := map[string]any{"query": "needle that is not there", "path": "tree"}
	measure(b, func() {
		out, err := search(context.Background(), args)
		if err != nil || out.IsError || out.Content != "(no matches)" {
			b.Fatalf("search_files: %v %q", err, firstN(out.Content, 200))
		}
	})
}

// measure runs op b.N times and reports allocations, the median and p95
// of one call, and the peak RSS growth over every call, the first (cold)
// one included.
func measure(b *testing.B, op func()) {
	b.ReportAllocs()
	runtime.GC()
	baseRSS, peakOK := resetPeakRSS()
	op() // warm the page cache and the code paths; its memory counts
	var times []time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		op()
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(times[len(times)*95/100].Microseconds())/1000, "p95-ms")
	if peakOK {
		if hwm, ok := procStatusKiB("VmHWM"); ok {
			b.ReportMetric(float64(max(hwm-baseRSS, 0))/1024, "peak-rss-growth-MiB")
		}
	}
}

// resetPeakRSS resets VmHWM to the current RSS and returns that RSS (KiB).
func resetPeakRSS() (int64, bool) {
	if runtime.GOOS != "linux" {
		return 0, false
	}
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return 0, false
	}
	return procStatusKiB("VmRSS")
}

func procStatusKiB(key string) (int64, bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

func firstN(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
