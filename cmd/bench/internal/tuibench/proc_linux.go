package tuibench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the times in /proc/<pid>/stat: Linux reports
// them in USER_HZ, 100 per second on every architecture it supports.
const userHZ = 100

// cpuTicks is a process's user plus system time so far, in USER_HZ ticks
// (fields 14 and 15 of /proc/<pid>/stat).
func cpuTicks(pid int) (int64, error) {
	path := fmt.Sprintf("/proc/%d/stat", pid)
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("%s: no command name in %q", path, s)
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("%s: %d fields after the command name, want at least 13", path, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("%s: utime %q stime %q: %v", path, f[11], f[12], err)
	}
	return utime + stime, nil
}

// idleCPU is pid's CPU time over the next d, in percent of one core.
func idleCPU(ctx context.Context, pid int, d time.Duration) (float64, error) {
	before, err := cpuTicks(pid)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	after, err := cpuTicks(pid)
	if err != nil {
		return 0, err
	}
	wall := time.Since(start).Seconds()
	return float64(after-before) / userHZ / wall * 100, nil
}
