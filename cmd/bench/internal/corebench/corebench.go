// Package corebench measures the core repository for the bench driver and
// its own Go benchmarks: a one-file save on a large core, EnsureSaved of a
// clean tree (the check before every turn) and the review of a proposal
// with every gate. Each measurement builds a fresh runtime home under the
// directory it is given (a scratch directory the caller removes) and
// returns the median of its samples; it uses only corerepo's API.
package corebench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/corerepo"
)

// benchHome installs the default cores under a new home in dir and grows
// the assistant core to files files (skills and plain library files), then
// initialises the repository and saves them.
func benchHome(ctx context.Context, dir string, files int) (*corerepo.Repo, corerepo.Paths, error) {
	home, err := os.MkdirTemp(dir, "corerepo-bench-")
	if err != nil {
		return nil, corerepo.Paths{}, err
	}
	p := corerepo.HomePaths(home)
	if err := core.InstallTemplates(p.Agents, core.TemplateAll, false); err != nil {
		return nil, p, err
	}
	have := 0
	_ = filepath.WalkDir(filepath.Join(p.Agents, "assistant"), func(_ string, d os.DirEntry, _ error) error {
		if d != nil && !d.IsDir() {
			have++
		}
		return nil
	})
	for i := 0; have < files; i++ {
		var rel, body string
		if i%2 == 0 {
			rel = fmt.Sprintf("agent/skills/bench/s%04d.md", i)
			body = fmt.Sprintf("---\nname: bench-%04d\ndescription: benchmark skill %d\n---\nDo the thing number %d carefully.\n", i, i, i)
		} else {
			rel = fmt.Sprintf("agent/lib/f%04d.txt", i)
			body = fmt.Sprintf("library text %d\n", i)
		}
		abs := filepath.Join(p.Agents, "assistant", filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
			return nil, p, err
		}
		if err := os.WriteFile(abs, []byte(body), 0o600); err != nil {
			return nil, p, err
		}
		have++
	}
	r, _, err := corerepo.Init(ctx, p, corerepo.Options{}, "benchmark")
	if err != nil {
		return nil, p, err
	}
	// The grown files are local edits of the templates' baseline.
	if _, err := r.Save(ctx, corerepo.SaveOptions{Reason: "benchmark files"}); err != nil {
		return nil, p, err
	}
	return r, p, nil
}

func median(samples []time.Duration) time.Duration {
	slices.Sort(samples)
	return samples[len(samples)/2]
}

// MeasureSave returns the median time of Save committing a one-file edit
// (SOUL.md) on a core of files files, over 25 saves after 3 warm-ups.
func MeasureSave(ctx context.Context, dir string, files int) (time.Duration, error) {
	r, p, err := benchHome(ctx, dir, files)
	if err != nil {
		return 0, err
	}
	soul := filepath.Join(p.Agents, "assistant", "agent", "SOUL.md")
	var samples []time.Duration
	for i := range 28 {
		f, err := os.OpenFile(soul, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return 0, err
		}
		fmt.Fprintf(f, "Edit %d.\n", i)
		f.Close()
		start := time.Now()
		res, err := r.Save(ctx, corerepo.SaveOptions{})
		d := time.Since(start)
		if err != nil {
			return 0, err
		}
		if !res.Saved {
			return 0, demiurge.Errorf(demiurge.EINTERNAL, "benchmark save found no edit")
		}
		if i >= 3 {
			samples = append(samples, d)
		}
	}
	return median(samples), nil
}

// MeasureEnsureSaved returns the median time of EnsureSaved with no local
// edits (the check before every turn) on a core of files files, over 50
// calls after 3 warm-ups.
func MeasureEnsureSaved(ctx context.Context, dir string, files int) (time.Duration, error) {
	r, _, err := benchHome(ctx, dir, files)
	if err != nil {
		return 0, err
	}
	var samples []time.Duration
	for i := range 53 {
		start := time.Now()
		if _, err := r.EnsureSaved(ctx); err != nil {
			return 0, err
		}
		if i >= 3 {
			samples = append(samples, time.Since(start))
		}
	}
	return median(samples), nil
}

// MeasureReview returns the median time of Review (commit and every gate)
// of a proposal changing files files (half modified skills, half new
// files) of a core of 500 files, over 9 runs after 2 warm-ups.
func MeasureReview(ctx context.Context, dir string, files int) (time.Duration, error) {
	r, _, err := benchHome(ctx, dir, 500)
	if err != nil {
		return 0, err
	}
	var samples []time.Duration
	for i := range 11 {
		run, err := r.StartRun(ctx, "assistant", "benchmark", corerepo.StartOptions{})
		if err != nil {
			return 0, err
		}
		for j := range files {
			var abs string
			if j%2 == 0 {
				abs = filepath.Join(run.AgentsDir, "assistant", "agent", "skills", "bench", fmt.Sprintf("s%04d.md", j*2))
			} else {
				abs = filepath.Join(run.AgentsDir, "assistant", "agent", "lib", fmt.Sprintf("new-%d-%d.txt", i, j))
			}
			body := fmt.Sprintf("---\nname: bench-%04d\ndescription: revised %d\n---\nRevised body %d.\n", j*2, i, j)
			if err := os.WriteFile(abs, []byte(body), 0o600); err != nil {
				run.Close()
				return 0, err
			}
		}
		if _, err := run.Finish(ctx, corerepo.EvolverOutcome{Summary: "benchmark"}); err != nil {
			return 0, err
		}
		start := time.Now()
		rv, err := r.Review(ctx, run.ID, corerepo.ReviewOptions{})
		d := time.Since(start)
		if err != nil {
			return 0, err
		}
		if !rv.Passed || len(rv.ChangedFiles) != files {
			return 0, demiurge.Errorf(demiurge.EINTERNAL, "benchmark review: passed=%t, %d changed files (want %d): %s", rv.Passed, len(rv.ChangedFiles), files, rv.Summary)
		}
		if i >= 2 {
			samples = append(samples, d)
		}
		if err := r.DiscardRun(ctx, run.ID); err != nil {
			return 0, err
		}
	}
	return median(samples), nil
}
