package process

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// tbWriter sends the Manager's log to the test log.
type tbWriter struct{ tb testing.TB }

func (w tbWriter) Write(p []byte) (int, error) {
	w.tb.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// testEnv is a minimal complete environment for test commands.
func testEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C"}
}

// mustManager returns a Manager storing artifacts under a temporary
// directory; the cleanup closes it and checks that nothing it started is
// left: no process carrying one of its spawn ids, no zombie child of this
// process.
func mustManager(tb testing.TB) *Manager {
	tb.Helper()
	m, err := NewManager(ManagerOptions{
		ArtifactRoot: filepath.Join(tb.TempDir(), "artifacts"),
		Logger:       slog.New(slog.NewTextHandler(tbWriter{tb}, nil)),
	})
	if err != nil {
		tb.Fatal(err)
	}
	var mu sync.Mutex
	ids := map[string]bool{}
	m.spawnHook = func(id string) {
		mu.Lock()
		ids[id] = true
		mu.Unlock()
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			tb.Errorf("Close: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		assertNoLeftovers(tb, ids)
	})
	return m
}

func sh(script string) []string { return []string{"/bin/sh", "-c", script} }

// assertNoLeftovers fails when any process carries one of the spawn ids
// as its TreeEnv value or any zombie is a child of this process.
func assertNoLeftovers(tb testing.TB, ids map[string]bool) {
	tb.Helper()
	// Killing and reaping is synchronous, but give /proc a moment to
	// forget a process being released.
	deadline := time.Now().Add(2 * time.Second)
	for {
		left := leftovers(ids)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("processes left behind: %s", strings.Join(left, "; "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func leftovers(ids map[string]bool) []string {
	tab := make(map[int]procEntry)
	if err := scanProcs(tab, make([]byte, statBufSize)); err != nil {
		return []string{err.Error()}
	}
	self := os.Getpid()
	var out []string
	for pid, e := range tab {
		if e.state == 'Z' && e.ppid == self {
			comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
			out = append(out, "zombie "+strconv.Itoa(pid)+" ("+strings.TrimSpace(string(comm))+
				") pgrp "+strconv.Itoa(e.pgrp)+" sid "+strconv.Itoa(e.sid)+" start "+strconv.FormatUint(e.start, 10))
			continue
		}
		if v := environValue(pid, TreeEnv); ids[v] {
			out = append(out, "pid "+strconv.Itoa(pid)+" of "+v+" state "+string(e.state))
		}
	}
	return out
}

// gone reports whether pid no longer names a live process started at or
// after the marker's time (a recycled pid is a different process).
func gone(pid int, spawnID string) bool {
	return !LeftInTree(pid, spawnID)
}

// readPIDs parses whitespace-separated pids.
func readPIDs(tb testing.TB, s string) []int {
	tb.Helper()
	var out []int
	for _, f := range strings.Fields(s) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			tb.Fatalf("not a pid: %q in %q", f, s)
		}
		out = append(out, pid)
	}
	return out
}

// waitFile waits until path holds n whitespace-separated fields.
func waitFile(tb testing.TB, path string, n int) string {
	tb.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if len(strings.Fields(string(b))) >= n {
			return string(b)
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s holds %q, want %d fields", path, b, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// residentKiB returns VmRSS of this process.
func residentKiB(tb testing.TB) int64 {
	tb.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			if f := strings.Fields(v); len(f) > 0 {
				if kib, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return kib
				}
			}
		}
	}
	tb.Fatal("no VmRSS in /proc/self/status")
	return 0
}
