//go:build !race

package taskbench_test

const logScalingUnderRace = false
