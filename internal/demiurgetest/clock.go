package demiurgetest

import (
	"sync"
	"time"
)

// Clock is a manual clock for the Now options of the store and the
// engines: Now reads it, Set and Advance move it. A clock made by
// NewTickingClock also moves by its step before every reading, so records
// written one after the other get distinct, ordered times. It is safe for
// concurrent use.
type Clock struct {
	mu   sync.Mutex // guards now
	now  time.Time
	step time.Duration
}

// NewClock returns a clock standing at start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// NewTickingClock returns a clock at start that advances by step at every
// reading (the first reading is start+step).
func NewTickingClock(start time.Time, step time.Duration) *Clock {
	return &Clock{now: start, step: step}
}

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

// Set puts the clock at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// Advance moves the clock by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
