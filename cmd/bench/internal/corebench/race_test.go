//go:build race

package corebench

const raceEnabled = true
