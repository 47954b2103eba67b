package procbench

import (
	"os"
	"testing"
)

// The synced write measures a real file of the asked size, leaves nothing
// behind, and refuses a size it cannot measure.
func TestMeasureSyncedWrite(t *testing.T) {
	dir := t.TempDir()
	mbps, err := MeasureSyncedWrite(dir, 3<<20+5)
	if err != nil {
		t.Fatal(err)
	}
	if mbps <= 0 {
		t.Fatalf("throughput %v MB/s, want a positive figure", mbps)
	}
	if left, err := os.ReadDir(dir); err != nil || len(left) != 0 {
		t.Fatalf("left behind %v (%v), want nothing", left, err)
	}
	if _, err := MeasureSyncedWrite(dir, 0); err == nil {
		t.Fatal("a size of 0 was measured")
	}
}
