package main

import (
	"os"
	"testing"

	"github.com/demiurge/demiurge/internal/fleet"
)

// The fleet figures start the running binary again as their Host
// processes: under test, that is this test binary.
func TestMain(m *testing.M) {
	if code, ok := fleet.RunChild(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
