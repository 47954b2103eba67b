package process

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	tail := " S 1 1 1 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10 18446744073709551615"
	tests := []struct {
		name    string
		in      string
		state   byte
		start   string
		wantErr bool
	}{
		{name: "plain", in: "42 (sleep)" + tail, state: 'S', start: "987654"},
		{name: "comm with spaces and parens", in: "42 (a) b (c) d)" + tail, state: 'S', start: "987654"},
		{name: "comm that looks like fields", in: "42 (x) R 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 1)" + tail, state: 'S', start: "987654"},
		{name: "zombie", in: "42 (sh)" + strings.Replace(tail, " S ", " Z ", 1), state: 'Z', start: "987654"},
		{name: "no paren", in: "42 sleep" + tail, wantErr: true},
		{name: "truncated", in: "42 (sleep) S 1 1", wantErr: true},
		{name: "non-numeric starttime", in: "42 (sleep)" + strings.Replace(tail, "987654", "abc", 1), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.in))
			if tt.wantErr {
				if err == nil {
					t.Fatalf("parseStat(%q) = %+v, want error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseStat: %v", err)
			}
			if got.state != tt.state || got.startTime != tt.start {
				t.Fatalf("parseStat = {%c %s}, want {%c %s}", got.state, got.startTime, tt.state, tt.start)
			}
		})
	}
}

func TestStartMarkerSelf(t *testing.T) {
	m1, err := StartMarker(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	boot, err := os.ReadFile(bootIDPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(string(boot)) + ":"; !strings.HasPrefix(m1, want) || len(m1) == len(want) {
		t.Fatalf("marker %q, want prefix %q and a start time", m1, want)
	}
	m2, err := StartMarker(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m1 != m2 {
		t.Fatalf("marker changed: %q then %q", m1, m2)
	}
	if !Alive(os.Getpid(), m1) {
		t.Fatal("Alive(self) = false")
	}
	if Alive(os.Getpid(), m1+"0") {
		t.Fatal("Alive(self, wrong marker) = true")
	}
	if Alive(0, "") || Alive(-1, m1) {
		t.Fatal("Alive of a non-positive pid = true")
	}
}

func TestAliveChildLifecycle(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	reaped := false
	t.Cleanup(func() {
		if !reaped {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})

	marker, err := StartMarker(pid)
	if err != nil {
		t.Fatal(err)
	}
	// (A child started in its parent's clock tick shares the parent's
	// marker: identity is pid and marker together, never the marker alone.)
	if !Alive(pid, marker) {
		t.Fatal("Alive(child) = false while it runs")
	}
	if !Alive(pid, "") {
		t.Fatal("Alive(child, \"\") = false while it runs")
	}

	// Killed but not yet reaped: a zombie is not alive.
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for Alive(pid, marker) {
		if time.Now().After(deadline) {
			t.Fatal("Alive(killed child) still true after 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}

	_ = cmd.Wait()
	reaped = true
	if Alive(pid, marker) {
		t.Fatal("Alive(reaped child) = true")
	}
	if _, err := StartMarker(pid); err == nil {
		// The pid may have been reused in between; then the marker must differ.
		if m, _ := StartMarker(pid); m == marker {
			t.Fatalf("StartMarker(reaped pid) = %q, the dead child's marker", m)
		}
	}
}
