package mcpbench_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge/cmd/bench/internal/mcpbench"
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
	f, err := mcpbench.MeasureDiscovery(ctx, testServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("discovery: four %s, slowest alone %s, ratio %.2f", f.Four, f.Slowest, f.Ratio)
	if f.Ratio > 2.5 || f.Slowest < 300*time.Millisecond {
		t.Fatalf("discovery figures %+v", f)
	}
	med, p95, err := mcpbench.MeasureCatalog(ctx, testServer(t), 50)
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
	med, p95, err := mcpbench.MeasureCatalog(context.Background(), testServer(b), b.N)
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
		f, err := mcpbench.MeasureDiscovery(context.Background(), testServer(b))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(f.Ratio, "ratio")
	}
}

// testServer builds mcp's test server once per test binary and returns
// its path.
func testServer(tb testing.TB) string {
	tb.Helper()
	serverOnce.Do(func() {
		serverDir, serverErr = os.MkdirTemp("", "mcpbench-testserver-")
		if serverErr != nil {
			return
		}
		serverPath = filepath.Join(serverDir, "mcptestserver")
		cmd := exec.Command("go", "build", "-o", serverPath, mcpbench.TestServerPackage)
		cmd.Dir = "../../../.." // the module root
		if out, err := cmd.CombinedOutput(); err != nil {
			serverErr = fmt.Errorf("building the test server: %v\n%s", err, out)
		}
	})
	if serverErr != nil {
		tb.Fatal(serverErr)
	}
	return serverPath
}

var (
	serverOnce sync.Once
	serverDir  string
	serverPath string
	serverErr  error
)

// TestMain removes the test server built for the run.
func TestMain(m *testing.M) {
	code := m.Run()
	if serverDir != "" {
		os.RemoveAll(serverDir)
	}
	os.Exit(code)
}

func requireLinux(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("stdio MCP servers need Linux")
	}
}

func requireLinuxB(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("stdio MCP servers need Linux")
	}
}
