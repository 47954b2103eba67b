//go:build race

package host_test

// raceEnabled reports whether the race detector is on: it slows the
// tokenizers and the database path about tenfold, so long tests are cut.
const raceEnabled = true
