// Package mcpbench measures the MCP runtime for the bench driver and its
// own Go benchmarks: discovery of four stdio servers at once against the
// slowest alone, and the preparation of a turn's catalog over connected
// servers. The servers are mcp's own test server (TestServerPackage),
// built by the caller; every Manager is closed and every directory removed
// before a measurement returns.
package mcpbench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/mcp"
	"github.com/demiurge/demiurge/policy"
)

// TestServerPackage is the module-relative package of the test server the
// measurements run (build it with `go build -o BIN ./mcp/internal/testserver/cmd/mcptestserver`
// from the module root).
const TestServerPackage = "./mcp/internal/testserver/cmd/mcptestserver"

// measureRounds is how many times each figure is measured; the median
// counts.
const measureRounds = 5

// DiscoveryFigures are the discovery benchmark's results.
type DiscoveryFigures struct {
	Four    time.Duration // median wall time to discover four servers at once
	Slowest time.Duration // median wall time to discover the slowest of them alone
	Ratio   float64       // Four / Slowest; the target is at most 1.5
}

// MeasureDiscovery measures the first figure of the MCP benchmarks: four
// healthy stdio servers (the test server at serverBinary, answering
// initialize after 150, 200, 250 and 300 ms, 50 tools each) discovered in
// one preparation, against the slowest of them discovered alone. Every
// round uses fresh sessions, so every server is spawned, initialised and
// listed; the medians of measureRounds rounds are compared.
func MeasureDiscovery(ctx context.Context, serverBinary string) (DiscoveryFigures, error) {
	b, err := newBench(serverBinary, []time.Duration{150 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond, 300 * time.Millisecond})
	if err != nil {
		return DiscoveryFigures{}, err
	}
	defer b.close()
	var four, slowest []time.Duration
	for round := 0; round < measureRounds; round++ {
		for _, set := range []struct {
			decls []mcp.Declaration
			into  *[]time.Duration
		}{{b.decls, &four}, {b.decls[len(b.decls)-1:], &slowest}} {
			tc := b.turn(fmt.Sprintf("bench_%d_%d", round, len(set.decls)))
			start := time.Now()
			defs, sts := b.m.Definitions(ctx, mcp.Request{Declarations: set.decls, Turn: tc, Gate: mcp.AllowOperator})
			*set.into = append(*set.into, time.Since(start))
			if err := allConnected(sts, len(defs)); err != nil {
				return DiscoveryFigures{}, err
			}
			if err := b.m.EvictSession(ctx, tc.SessionID); err != nil {
				return DiscoveryFigures{}, err
			}
		}
	}
	f := DiscoveryFigures{Four: median(four), Slowest: median(slowest)}
	f.Ratio = float64(f.Four) / float64(f.Slowest)
	return f, nil
}

// MeasureCatalog measures the second figure: preparing a turn's catalog
// (Definitions, then effect.Prepare of the MCP entries) for four connected
// servers with 50 tools each, connections cached, n times after one
// warm-up preparation that connects them. It returns the median and the
// 95th percentile; the target median is at most 5 ms.
func MeasureCatalog(ctx context.Context, serverBinary string, n int) (med, p95 time.Duration, err error) {
	if n <= 0 {
		return 0, 0, demiurge.Errorf(demiurge.EINVALID, "measure catalog: n must be positive, got %d", n)
	}
	b, err := newBench(serverBinary, []time.Duration{0, 0, 0, 0})
	if err != nil {
		return 0, 0, err
	}
	defer b.close()
	tc := b.turn("bench_catalog")
	defs, sts := b.m.Definitions(ctx, mcp.Request{Declarations: b.decls, Turn: tc, Gate: mcp.AllowOperator})
	if err := allConnected(sts, len(defs)); err != nil {
		return 0, 0, err
	}
	want := len(defs)
	if want < 4*benchTools {
		return 0, 0, demiurge.Errorf(demiurge.EINTERNAL, "measure catalog: %d tools offered, want at least %d", want, 4*benchTools)
	}
	samples := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		start := time.Now()
		defs, _ := b.m.Definitions(ctx, mcp.Request{Declarations: b.decls, Turn: tc, Gate: mcp.AllowOperator})
		if _, err := effect.Prepare(effect.Sources{CoreID: tc.CoreID, Revision: tc.CoreRevision, MCP: defs}); err != nil {
			return 0, 0, err
		}
		samples = append(samples, time.Since(start))
		if len(defs) != want {
			return 0, 0, demiurge.Errorf(demiurge.EINTERNAL, "measure catalog: %d tools offered, want %d", len(defs), want)
		}
	}
	slices.Sort(samples)
	return median(samples), samples[(len(samples)*95+99)/100-1], nil
}

// benchTools is the number of trivial tools each benchmark server adds to
// the test server's own.
const benchTools = 50

// bench is an MCP Manager with four test-server declarations.
type bench struct {
	m     *mcp.Manager
	dir   string
	decls []mcp.Declaration
}

func newBench(serverBinary string, delays []time.Duration) (*bench, error) {
	if _, err := os.Stat(serverBinary); err != nil {
		return nil, demiurge.WrapError(demiurge.ENOTFOUND, err, "MCP test server %s not found (build %s)", serverBinary, TestServerPackage)
	}
	dir, err := os.MkdirTemp("", "demiurge-mcp-bench-")
	if err != nil {
		return nil, err
	}
	b := &bench{dir: dir}
	b.m = mcp.NewManager(mcp.Options{
		LogDir:      filepath.Join(dir, "logs"),
		PrivateHome: func(id string) string { return filepath.Join(dir, "homes", id) },
		CloseGrace:  100 * time.Millisecond,
	})
	for i, delay := range delays {
		id := "bench" + strconv.Itoa(i+1)
		body := fmt.Sprintf("command: %q\nargs: [-tools, %q, -init-delay, %q]\napproval_policy: auto\n", serverBinary, strconv.Itoa(benchTools), delay.String())
		d, err := mcp.ParseDeclaration(id, filepath.Join(dir, id+".yaml"), id+".yaml", []byte(body))
		if err != nil {
			b.close()
			return nil, err
		}
		b.decls = append(b.decls, d)
	}
	return b, nil
}

func (b *bench) turn(session string) effect.TurnContext {
	return effect.TurnContext{
		SessionID: session, TurnID: "turn_bench", CoreID: "bench", CoreRevision: "rev",
		Workspace: b.dir, Scope: demiurge.PrincipalScope{PrincipalID: "bench"},
		Grants: policy.NewGrants([]string{"mcp.connect:*"}, nil), Secrets: effect.NewSecrets(),
	}
}

func (b *bench) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = b.m.Close(ctx)
	_ = os.RemoveAll(b.dir)
}

func allConnected(sts []mcp.ServerStatus, tools int) error {
	var bad []string
	for _, s := range sts {
		if s.State != mcp.StateConnected {
			bad = append(bad, s.Server+": "+s.State+" "+s.Error)
		}
	}
	if len(bad) > 0 || tools == 0 {
		return demiurge.Errorf(demiurge.EINTERNAL, "MCP benchmark servers did not connect: %s", strings.Join(bad, "; "))
	}
	return nil
}

// median of samples (sorted or not; samples is not modified).
func median(samples []time.Duration) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
