package procstat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStatus(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", "Name:\tdemiurge\nVmPeak:\t 1234 kB\nVmHWM:\t   30720 kB\nVmRSS:\t   20480 kB\nThreads:\t7\n")
	got, err := Status(good)
	if err != nil {
		t.Fatal(err)
	}
	if got["VmRSS"] != 20 || got["VmHWM"] != 30 {
		t.Fatalf("Status = %v, want VmRSS 20 and VmHWM 30 MiB", got)
	}
	if _, err := Status(write("norss", "Name:\tx\nVmHWM:\t 1 kB\n")); err == nil || !strings.Contains(err.Error(), "no VmRSS") {
		t.Fatalf("missing VmRSS: err %v", err)
	}
	if _, err := Status(write("bad", "VmRSS:\t x kB\n")); err == nil || !strings.Contains(err.Error(), "VmRSS") {
		t.Fatalf("bad VmRSS: err %v", err)
	}
	if _, err := Status(filepath.Join(dir, "absent")); err == nil {
		t.Fatal("absent file: no error")
	}
}
