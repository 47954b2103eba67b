//go:build race

package tui

// raceEnabled reports a build with the race detector, which slows
// everything down several times.
const raceEnabled = true
