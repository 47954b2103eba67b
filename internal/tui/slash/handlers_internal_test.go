package slash

import "testing"

// TestEveryCommandHasAHandler: the catalog and the dispatch table name the
// same commands.
func TestEveryCommandHasAHandler(t *testing.T) {
	for _, s := range specs {
		if handlers[s.Name] == nil {
			t.Errorf("/%s has no handler", s.Name)
		}
	}
	if len(handlers) != len(specs) {
		t.Errorf("%d handlers for %d commands", len(handlers), len(specs))
	}
}
