package effect

import (
	"fmt"
	"sync"
	"testing"
)

// The JSON Schema metaschemas are compiled on first use rather than at
// package init (third_party/jsonschema): schemas of several drafts compiled
// at once from many goroutines are still checked against their
// metaschemas, each draft's compiled once.
func TestSchemasCheckedAgainstLazyMetaschemas(t *testing.T) {
	cases := []struct {
		schema string
		ok     bool
	}{
		{`{"type":"object","properties":{"x":{"type":"string"}}}`, true},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"x":{"minLength":1}}}`, true},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`, true},
		{`{"type":"object","properties":{"x":{"type":5}}}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"x":{"minLength":"one"}}}`, false},
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(cases))
	for i := range 8 {
		for j, c := range cases {
			wg.Go(func() {
				// A distinct text per goroutine, so the process-wide cache
				// of compiled schemas does not answer for the compiler.
				raw := fmt.Sprintf(`{"description":"%d-%d",%s`, i, j, c.schema[1:])
				_, err := compileSchema([]byte(raw))
				if (err == nil) != c.ok {
					errs <- fmt.Sprintf("%s: compile error %v, want ok=%v", c.schema, err, c.ok)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
