package main

import (
	"context"
	"fmt"
	"os"

	"github.com/demiurge/demiurge/cmd/bench/internal/storebench"
)

// appendTarget is figure 3's lower limit on Append's rate over raw inserts.
const appendTarget = 0.5

// appendRows measures figure 3 on a fresh database in dir.
func appendRows(ctx context.Context, dir string, c counts) ([]row, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ratio, appendRate, rawRate, err := storebench.MeasureAppendRatio(ctx, dir, c.batches)
	if err != nil {
		return nil, err
	}
	return []row{
		{figure: figAppend + ", ratio", value: fmt.Sprintf("%.2f", ratio), target: fmt.Sprintf("≥ %.1f", appendTarget), verdict: check(ratio >= appendTarget)},
		{figure: figAppend + ", Append", value: fmt.Sprintf("%.0f events/s", appendRate)},
		{figure: figAppend + ", raw INSERT", value: fmt.Sprintf("%.0f events/s", rawRate)},
	}, nil
}

// benchPostgresEnv names the PostgreSQL database of figAppendPG.
const benchPostgresEnv = "DEMIURGE_BENCH_POSTGRES"

// appendPostgresRows measures figure 3 on the PostgreSQL database of
// DEMIURGE_BENCH_POSTGRES; unset, the row says it was not measured.
func appendPostgresRows(ctx context.Context, c counts) ([]row, error) {
	dbURL := os.Getenv(benchPostgresEnv)
	if dbURL == "" {
		return []row{{figure: figAppendPG + ", ratio", value: "n/a (set " + benchPostgresEnv + ")", target: fmt.Sprintf("≥ %.1f", appendTarget)}}, nil
	}
	ratio, appendRate, rawRate, err := storebench.MeasurePostgresAppendRatio(ctx, dbURL, c.batches)
	if err != nil {
		return nil, err
	}
	return []row{
		{figure: figAppendPG + ", ratio", value: fmt.Sprintf("%.2f", ratio), target: fmt.Sprintf("≥ %.1f", appendTarget), verdict: check(ratio >= appendTarget)},
		{figure: figAppendPG + ", Append", value: fmt.Sprintf("%.0f events/s", appendRate)},
		{figure: figAppendPG + ", raw INSERT", value: fmt.Sprintf("%.0f events/s", rawRate)},
	}, nil
}
