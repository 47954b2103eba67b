//go:build !race

package corebench

const raceEnabled = false
