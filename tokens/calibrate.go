package tokens

import "sync"

// Calibration bounds.
const (
	minFactor = 0.5
	maxFactor = 4.0
	// smoothing is the weight of a new observation.
	smoothing = 0.5
)

// Calibration corrects a counter's totals for one session and model: the
// ratio of the input tokens a provider reported to the count made for the
// same request, smoothed, kept within [0.5, 4]. Before any observation
// the factor is 1. It is safe for concurrent use.
type Calibration struct {
	mu     sync.Mutex // guards factor, seen
	factor float64
	seen   bool
}

// Observe records that a request counted as estimated was reported as
// reported tokens. Counts that are not positive are ignored.
func (c *Calibration) Observe(estimated, reported int64) {
	if estimated <= 0 || reported <= 0 {
		return
	}
	r := min(max(float64(reported)/float64(estimated), minFactor), maxFactor)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.seen {
		c.factor, c.seen = r, true
		return
	}
	c.factor = c.factor*(1-smoothing) + r*smoothing
}

// Factor is the current correction (1 before any observation).
func (c *Calibration) Factor() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.seen {
		return 1
	}
	return c.factor
}

// Observed reports whether any observation was recorded.
func (c *Calibration) Observed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen
}

// Apply scales n by the factor, rounding up.
func (c *Calibration) Apply(n int) int {
	f := c.Factor()
	if f == 1 {
		return n
	}
	return int(float64(n)*f + 0.999)
}
