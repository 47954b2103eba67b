package host

import (
	"context"
	"errors"
	"sync"
	"time"
)

// closeStack holds the closing of everything Open opened, in the order it
// was opened. Close, and an Open that fails halfway, run it in reverse:
// whatever was opened later may use what was opened earlier, so it is
// closed first. See the package doc for the resulting order.
type closeStack struct {
	mu     sync.Mutex // guards steps, closed
	steps  []closeStep
	closed bool
	// failAfter, set by tests only, fails Open right after the named step
	// was recorded.
	failAfter func(step string) error
}

type closeStep struct {
	name  string
	bound time.Duration // how long the step may take; 0 leaves it to the step
	close func(ctx context.Context) error
}

// opened records how to close what a step of Open just opened. Its error is the test
// seam's (failAfter); Open returns it as if the step after this one had
// failed.
func (s *closeStack) opened(name string, bound time.Duration, close func(ctx context.Context) error) error {
	s.mu.Lock()
	s.steps = append(s.steps, closeStep{name: name, bound: bound, close: close})
	s.mu.Unlock()
	if s.failAfter != nil {
		return s.failAfter(name)
	}
	return nil
}

// close runs every step in reverse order, each bounded by its own time
// whatever ctx says (a Host that is closing must still release its lease
// and close its store), and joins their errors. Only the first call runs
// the steps; later ones return nil.
func (s *closeStack) close(ctx context.Context) error {
	s.mu.Lock()
	steps := s.steps
	already := s.closed
	s.closed, s.steps = true, nil
	s.mu.Unlock()
	if already {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	var errs []error
	for i := len(steps) - 1; i >= 0; i-- {
		errs = append(errs, steps[i].run(ctx))
	}
	return errors.Join(errs...)
}

func (st closeStep) run(ctx context.Context) error {
	if st.bound > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, st.bound)
		defer cancel()
	}
	return st.close(ctx)
}
