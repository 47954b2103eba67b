package turn

import (
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/tokens"
)

// countingCounter counts how often it is asked.
type countingCounter struct {
	tokens.Counter
	calls int
}

func (c *countingCounter) Count(s string) int { c.calls++; return c.Counter.Count(s) }

// A tool definition is counted once per schema: the same definition again
// is answered from the cache, another schema map is counted afresh.
func TestToolCountsAreCachedPerSchema(t *testing.T) {
	var cache countCache
	c := &countingCounter{Counter: tokens.For("")}
	schema := map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}
	spec := demiurge.ToolSpec{Name: "read_file", Description: "Read a file.", InputSchema: schema}
	first := countTools(c, []demiurge.ToolSpec{spec}, &cache)
	asked := c.calls
	if first <= 0 || asked == 0 {
		t.Fatalf("count %d after %d calls", first, asked)
	}
	if again := countTools(c, []demiurge.ToolSpec{spec}, &cache); again != first || c.calls != asked {
		t.Fatalf("second count %d (want %d) asked the counter %d more times", again, first, c.calls-asked)
	}
	other := spec
	other.InputSchema = map[string]any{"type": "object"}
	if n := countTools(c, []demiurge.ToolSpec{other}, &cache); c.calls == asked || n == first {
		t.Fatalf("another schema was not counted afresh: %d", n)
	}
}
