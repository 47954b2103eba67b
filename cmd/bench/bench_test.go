package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		name        string
		samples     []time.Duration
		median, p95 time.Duration
	}{
		{"empty", nil, 0, 0},
		{"one", ms(7), 7 * time.Millisecond, 7 * time.Millisecond},
		{"odd unsorted", ms(5, 1, 3), 3 * time.Millisecond, 5 * time.Millisecond},
		{"even averages the middle", ms(4, 1, 2, 3), 2500 * time.Microsecond, 4 * time.Millisecond},
		// 20 samples: rank ceil(19) = 19, so p95 is the second largest.
		{"twenty", ms(20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1), 10500 * time.Microsecond, 19 * time.Millisecond},
		// 21 samples: rank ceil(19.95) = 20.
		{"twenty-one", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 100), 11 * time.Millisecond, 20 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]time.Duration(nil), tt.samples...)
			got := summarize(tt.samples)
			if got.median != tt.median || got.p95 != tt.p95 {
				t.Fatalf("summarize = %+v, want median %v p95 %v", got, tt.median, tt.p95)
			}
			for i := range in {
				if in[i] != tt.samples[i] {
					t.Fatalf("summarize reordered its input: %v", tt.samples)
				}
			}
		})
	}
}

func TestTimedRowsVerdict(t *testing.T) {
	tests := []struct {
		samples []time.Duration
		want    verdict
	}{
		{[]time.Duration{time.Millisecond, 2 * time.Millisecond, 9 * time.Millisecond}, met},
		{[]time.Duration{time.Millisecond, 3 * time.Millisecond, 3 * time.Millisecond}, missed},
		{[]time.Duration{2 * time.Millisecond}, met}, // the limit itself is within target
	}
	for _, tt := range tests {
		rows := timedRows(figTurn, tt.samples, 2*time.Millisecond)
		if len(rows) != 2 {
			t.Fatalf("timedRows gave %d rows, want 2", len(rows))
		}
		if got := rows[0].verdict; got != tt.want {
			t.Errorf("samples %v: verdict %v, want %v", tt.samples, got, tt.want)
		}
		if got, want := rows[0].target, "≤ 2 ms"; got != want {
			t.Errorf("target %q, want %q", got, want)
		}
		if rows[1].verdict != info || rows[1].target != "" {
			t.Errorf("p95 row %+v, want informational", rows[1])
		}
	}
}

func TestWriteReport(t *testing.T) {
	var buf bytes.Buffer
	rows := []row{
		{figure: "a, median", value: "1.00 ms", target: "≤ 2 ms", verdict: met},
		{figure: "a, p95", value: "3.00 ms"},
		{figure: "b", value: "0.40", target: "≥ 0.5", verdict: missed},
		{figure: "c", value: "error", verdict: failedVerdict},
	}
	writeReport(&buf, "CPU X, 4 cores, go1.26, linux/amd64", countsFor(true, 0), rows)
	got := buf.String()
	for _, want := range []string{
		"Machine: CPU X, 4 cores, go1.26, linux/amd64\n",
		"| figure | value | target | ok |\n|---|---|---|---|\n",
		"| a, median | 1.00 ms | ≤ 2 ms | ok |\n",
		"| a, p95 | 3.00 ms | — | — |\n",
		"| b | 0.40 | ≥ 0.5 | MISS |\n",
		"| c | error | — | FAIL |\n",
		"Samples: 30 turns after 5 warm-up",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
}

func TestCountsFor(t *testing.T) {
	full, short := countsFor(false, 0), countsFor(true, 0)
	if short.turns >= full.turns || short.runs >= full.runs || short.batches >= full.batches {
		t.Fatalf("short %+v is not smaller than full %+v", short, full)
	}
	if c := countsFor(true, 7); c.turns != 7 || c.runs != 7 || c.batches != 7 || c.turnWarm != short.turnWarm {
		t.Fatalf("-n 7 gave %+v", c)
	}
}

func TestCPUModel(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cpuinfo")
	if err := os.WriteFile(p, []byte("processor\t: 0\nvendor_id\t: X\nmodel name\t: Example CPU @ 3GHz\n\nprocessor\t: 1\nmodel name\t: Example CPU @ 3GHz\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := cpuModel(p), "Example CPU @ 3GHz"; got != want {
		t.Fatalf("cpuModel = %q, want %q", got, want)
	}
	if got, want := cpuModel(filepath.Join(dir, "absent")), "unknown CPU"; got != want {
		t.Fatalf("cpuModel(absent) = %q, want %q", got, want)
	}
}

func TestWatcher(t *testing.T) {
	w := newWatcher("[fake] hello")
	for _, chunk := range []string{"[fa", "ke] he"} {
		w.Write([]byte(chunk))
	}
	select {
	case <-w.found:
		t.Fatal("found before the needle was complete")
	default:
	}
	w.Write([]byte("llo\n"))
	w.Write([]byte("more\n")) // a second write after the match must not close twice
	select {
	case <-w.found:
	default:
		t.Fatal("needle split over writes was not found")
	}
	if got, want := w.String(), "[fake] hello\nmore\n"; got != want {
		t.Fatalf("kept %q, want %q", got, want)
	}

	big := newWatcher("")
	n, err := big.Write(make([]byte, watchLimit+10))
	if n != watchLimit+10 || err != nil {
		t.Fatalf("Write = %d, %v; want the whole input accepted", n, err)
	}
	if got := len(big.String()); got != watchLimit {
		t.Fatalf("kept %d bytes, want %d", got, watchLimit)
	}
}

func TestChildEnvDropsProviderAndHomeVariables(t *testing.T) {
	t.Setenv("DEMIURGE_HOME", "/elsewhere")
	t.Setenv("OPENAI_API_KEY", "sk-bench-test")
	t.Setenv("ANTHROPIC_BASE_URL", "http://example.invalid")
	t.Setenv("BENCH_KEEP_ME", "1")
	env := strings.Join(childEnv(), "\n")
	for _, gone := range []string{"DEMIURGE_HOME=", "OPENAI_API_KEY=", "ANTHROPIC_BASE_URL="} {
		if strings.Contains(env, gone) {
			t.Errorf("child environment keeps %s", gone)
		}
	}
	if !strings.Contains(env, "BENCH_KEEP_ME=1") {
		t.Error("child environment dropped an unrelated variable")
	}
}

func TestPercentiles(t *testing.T) {
	var s []time.Duration
	for i := 100; i >= 1; i-- {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	if p := percentiles(s); p.p50 != 50*time.Millisecond || p.p99 != 99*time.Millisecond {
		t.Fatalf("percentiles of 1..100 ms: %+v", p)
	}
	if p := percentiles(s[99:]); p.p50 != time.Millisecond || p.p99 != time.Millisecond {
		t.Fatalf("percentiles of one sample: %+v", p)
	}
	if p := percentiles(nil); p != (p50p99{}) {
		t.Fatalf("percentiles of none: %+v", p)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
