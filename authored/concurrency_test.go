package authored_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/demiurge/demiurge/authored"
)

// One definition invoked from 8 goroutines: each call sees its own arguments
// and its own staged output.
func TestConcurrentInvoke(t *testing.T) {
	f := newFixture(t, fixtureCore, authored.Options{})
	echo := f.def(t, "echo").Adapter
	set := f.def(t, "output_set").Adapter
	tc := turnContext(f.core, coreGrants(f.core))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				text := fmt.Sprintf("g%d-%d", g, i)
				out, err := run(t.Context(), echo, invocation(text, tc))
				if err != nil || out.Content != text {
					errs <- fmt.Errorf("echo %s: %#v %v", text, out, err)
					return
				}
				out, err = run(t.Context(), set, invocationArgs(map[string]any{"override": text, "fail": i%2 == 0}, tc))
				if err != nil || out.Content != text || out.IsError != (i%2 == 0) || out.Data["k"] != "v" {
					errs <- fmt.Errorf("output_set %s: %#v %v", text, out, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
