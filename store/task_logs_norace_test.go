//go:build !race

package store_test

const logScalingUnderRace = false
