package procbench

import "testing"

func TestMeasureOutputDiscovery(t *testing.T) {
	if _, err := MeasureOutputDiscovery(0); err == nil {
		t.Fatal("zero bytes accepted")
	}
	mbps, err := MeasureOutputDiscovery(2 << 20)
	if err != nil || mbps <= 0 {
		t.Fatalf("%v MB/s, %v", mbps, err)
	}
}
