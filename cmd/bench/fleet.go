package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/demiurge/demiurge/internal/fleet"
)

// Targets of the fleet figures.
const (
	fleetTasksTarget    = 2000.0 // tasks per second, all Hosts together
	fleetFailoverTarget = 10 * time.Second
	fleetHosts          = 3
)

// fleetTaskRows measures trivial tasks queued across three Host processes
// on one PostgreSQL ledger (DEMIURGE_BENCH_POSTGRES), from the first
// submission to the last task succeeded.
func fleetTaskRows(ctx context.Context, dir string, c counts) ([]row, error) {
	target := fmt.Sprintf("≥ %.0f tasks/s", fleetTasksTarget)
	base := os.Getenv(benchPostgresEnv)
	if base == "" {
		return []row{{figure: figFleetTasks, value: "n/a (set " + benchPostgresEnv + ")", target: target}}, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	perHost := 1000
	if c.runs < 40 { // -short
		perHost = 300
	}
	tps, err := fleet.MeasureThroughput(ctx, exe, base, dir, fleetHosts, perHost)
	if err != nil {
		return nil, err
	}
	return []row{{figure: fmt.Sprintf("%s (%d tasks)", figFleetTasks, fleetHosts*perHost), value: fmt.Sprintf("%.0f tasks/s", tps),
		target: target, verdict: check(tps >= fleetTasksTarget)}}, nil
}

// fleetFailoverRows measures how long a SIGKILLed Host's running task and
// claimed queue stay out of service, its lease expiry included.
func fleetFailoverRows(ctx context.Context, dir string) ([]row, error) {
	target := fmt.Sprintf("≤ %.0f s", fleetFailoverTarget.Seconds())
	base := os.Getenv(benchPostgresEnv)
	if base == "" {
		return []row{{figure: figFleetFailover, value: "n/a (set " + benchPostgresEnv + ")", target: target}}, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	d, err := fleet.MeasureFailover(ctx, exe, base, dir)
	if err != nil {
		return nil, err
	}
	return []row{{figure: figFleetFailover, value: fmt.Sprintf("%.1f s", d.Seconds()), target: target,
		verdict: check(d <= fleetFailoverTarget)}}, nil
}
