package corerepo

import (
	"context"
	"sync"
	"testing"

	"github.com/demiurge/demiurge"
)

func TestConcurrentPromotions(t *testing.T) {
	ctx := context.Background()
	for round := range 3 {
		p, r := newHome(t)
		base := mustLive(t, r)
		// Two runs of different cores, both based on the same live.
		a := startEdited(t, r, func(d string) { editFile(t, d, "assistant/agent/SOUL.md", "", "A\n") })
		run, err := r.StartRun(ctx, "evolver", "b", StartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		editFile(t, run.AgentsDir, "evolver/agent/SOUL.md", "", "B\n")
		if _, err := run.Finish(ctx, EvolverOutcome{}); err != nil {
			t.Fatal(err)
		}
		ids := []string{a.ID, run.ID}
		results := make([]*PromoteResult, 2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i], errs[i] = r.Promote(ctx, ids[i], PromoteOptions{})
			}()
		}
		close(start)
		wg.Wait()
		won := 0
		for i := range 2 {
			switch {
			case errs[i] == nil && results[i].Promoted:
				won++
			case demiurge.ErrorCode(errs[i]) == demiurge.ECONFLICT:
			default:
				t.Fatalf("round %d promote %d = %+v, %v", round, i, results[i], errs[i])
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d promotions won, want 1 (%v)", round, won, errs)
		}
		live := mustLive(t, r)
		if prev, _ := r.Previous(); live == base || prev != base {
			t.Fatalf("live=%s previous=%s base=%s", live, prev, base)
		}
		mustClean(t, r)
		if st, _ := r.Status(); !st.Clean {
			t.Fatalf("status = %+v", st)
		}
		_ = p
	}
}

func TestConcurrentEnsureSaved(t *testing.T) {
	ctx := context.Background()
	p, r := newHome(t)
	editFile(t, p.Agents, "assistant/agent/SOUL.md", "", "x\n")
	revs := make([]string, 8)
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range revs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			revs[i], errs[i] = r.EnsureSaved(ctx)
		}()
	}
	wg.Wait()
	for i := range revs {
		if errs[i] != nil || revs[i] != revs[0] {
			t.Fatalf("EnsureSaved %d = %s, %v (first %s)", i, revs[i], errs[i], revs[0])
		}
	}
	if vs, _ := r.Versions(0); len(vs) != 2 {
		t.Fatalf("%d revisions, want 2 (one save)", len(vs))
	}
}
