//go:build race

package controlplane_test

// raceEnabled reports whether the race detector is on: it slows the
// database path about tenfold, so latency bounds are scaled.
const raceEnabled = true
