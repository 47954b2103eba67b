package starlark

import (
	"fmt"
	"math"

	sl "go.starlark.net/starlark"
)

// DefaultMemoryLimit is the allocation budget of one execution (Options.MemoryLimit).
const DefaultMemoryLimit int64 = 256 << 20

// budgetKey is the thread-local key of the execution's allocation budget.
const budgetKey = "demiurge.budget"

// budget is the allocation budget of one execution. It belongs to the
// execution's thread; only that goroutine charges it.
type budget struct {
	limit int64
	used  int64
}

// errMemory is returned by a charge that would pass the budget. The execution
// reports it as KindMemory whatever the authored code did with it.
type errMemory struct{ limit int64 }

func (e *errMemory) Error() string { return memoryMessage(e.limit) }

// memoryMessage is the sentence authored code and the model see.
func memoryMessage(limit int64) string {
	return "authored code exceeded its memory budget of " + formatBytes(limit)
}

// formatBytes renders n in the largest binary unit that divides it.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func budgetOf(th *sl.Thread) *budget {
	b, _ := th.Local(budgetKey).(*budget)
	return b
}

// remaining is what the thread may still allocate; MaxInt64 for a thread this
// package did not start (no budget).
func remaining(th *sl.Thread) int64 {
	b := budgetOf(th)
	if b == nil {
		return math.MaxInt64
	}
	return b.limit - b.used
}

// charge records n bytes about to be allocated on behalf of the execution
// running on th. Once the total would pass the limit it cancels the thread
// and returns *errMemory, so the execution stops even if the error were lost.
func charge(th *sl.Thread, n int64) error {
	b := budgetOf(th)
	if b == nil || n <= 0 {
		return nil
	}
	if n > b.limit-b.used {
		b.used = b.limit + 1 // stays exceeded: every later charge fails too
		th.Cancel(memoryMessage(b.limit))
		return &errMemory{limit: b.limit}
	}
	b.used += n
	return nil
}

// exceeded reports whether the execution on th passed its budget.
func exceeded(th *sl.Thread) bool {
	b := budgetOf(th)
	return b != nil && b.used > b.limit
}
