//go:build !race

package corerepo

const raceEnabled = false
