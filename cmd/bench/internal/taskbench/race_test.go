//go:build race

package taskbench_test

// logScalingUnderRace: the race detector makes the 120,000-line scaling
// measurement take half a minute; its figure is meaningless there anyway.
const logScalingUnderRace = true
