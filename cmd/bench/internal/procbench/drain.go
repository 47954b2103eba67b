// Package procbench measures the process manager for the bench driver
// and its own Go benchmarks: draining a large output through tails,
// redaction and an artifact against `cat`, the time to kill a tree that
// ignores SIGTERM, spawn-to-exit with and without the sandbox, and the
// throughput of the terminal's output discovery. Everything it runs goes
// through process's API; every Manager it makes is closed before it
// returns.
package procbench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/sandbox"
)

// drainRounds is how many times MeasureDrainRatio measures each side; the
// fastest round of each counts, so that a burst of unrelated load on the
// machine does not decide the figure.
const drainRounds = 3

// MeasureDrainRatio runs `head -c <bytes> /dev/zero` through a Manager
// (tails, redaction with one replacement, an artifact under dir, synced to
// disk at the end as always) and the same bytes through `cat` into
// /dev/null, and returns the throughput of both in MB/s (10^6 bytes, the
// fastest of drainRounds rounds each, timed from start to Result), their
// ratio (host/cat; the target is at least 0.5) and how much the resident
// set of this process grew over all rounds, in MiB (the target is at most
// 32). It is the measurement behind the bench driver's drain figure and
// BenchmarkDrain256MiB. A non-nil box runs the command inside the sandbox.
func MeasureDrainRatio(ctx context.Context, dir string, bytes int64, box *sandbox.Policy) (ratio, hostMBps, catMBps float64, rssGrowthMiB float64, err error) {
	if bytes <= 0 {
		return 0, 0, 0, 0, demiurge.Errorf(demiurge.EINVALID, "measure drain: bytes must be positive, got %d", bytes)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C"}
	head, err := exec.LookPath("head")
	if err != nil {
		return 0, 0, 0, 0, demiurge.WrapError(demiurge.ENOTFOUND, err, "measure drain: head not found")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		return 0, 0, 0, 0, demiurge.WrapError(demiurge.ENOTFOUND, err, "measure drain: sh not found")
	}
	m, err := process.NewManager(process.ManagerOptions{ArtifactRoot: filepath.Join(dir, "artifacts")})
	if err != nil {
		return 0, 0, 0, 0, err
	}
	defer m.Close(context.WithoutCancel(ctx))

	runtime.GC()
	debug.FreeOSMemory()
	base, err := residentMiB()
	if err != nil {
		return 0, 0, 0, 0, err
	}
	peak, stop := sampleResident()
	hostBest, catBest := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	for range drainRounds {
		d, err := timeHostDrain(ctx, m, head, env, bytes, box)
		if err != nil {
			stop()
			return 0, 0, 0, 0, err
		}
		hostBest = min(hostBest, d)
		if d, err = timeCat(ctx, sh, head, env, bytes); err != nil {
			stop()
			return 0, 0, 0, 0, err
		}
		catBest = min(catBest, d)
	}
	stop()
	mb := float64(bytes) / 1e6
	hostMBps = mb / hostBest.Seconds()
	catMBps = mb / catBest.Seconds()
	rssGrowthMiB = max(0, float64(peak.Load())/1024-base)
	return hostMBps / catMBps, hostMBps, catMBps, rssGrowthMiB, nil
}

// sampleResident records the peak VmRSS (KiB) every 5 ms until stop.
func sampleResident() (peak *atomic.Int64, stop func()) {
	peak = new(atomic.Int64)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if v, err := residentMiB(); err == nil {
				if kib := int64(v * 1024); kib > peak.Load() {
					peak.Store(kib)
				}
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return peak, func() {
		close(done)
		wg.Wait()
	}
}

// timeHostDrain runs head through m and checks the counts and the artifact.
func timeHostDrain(ctx context.Context, m *process.Manager, head string, env []string, bytes int64, box *sandbox.Policy) (time.Duration, error) {
	t0 := time.Now()
	res, err := m.Run(ctx, process.Spec{
		Argv:      []string{head, "-c", strconv.FormatInt(bytes, 10), "/dev/zero"},
		Env:       env,
		SessionID: "measure-drain",
		Redact:    map[string]string{"measure-drain-secret-value": "<redacted:MEASURE>"},
		Sandbox:   box,
	})
	d := time.Since(t0)
	if err != nil {
		return 0, err
	}
	if res.ArtifactErr != nil {
		return 0, demiurge.WrapError(demiurge.EINTERNAL, res.ArtifactErr, "measure drain: artifact failed")
	}
	if res.ExitCode != 0 || res.Stdout.TotalBytes != bytes {
		return 0, demiurge.Errorf(demiurge.EINTERNAL, "measure drain: exit %d, %d of %d bytes", res.ExitCode, res.Stdout.TotalBytes, bytes)
	}
	fi, err := os.Stat(res.Stdout.ArtifactPath)
	if err != nil || fi.Size() != bytes {
		return 0, demiurge.Errorf(demiurge.EINTERNAL, "measure drain: artifact %s does not hold %d bytes", res.Stdout.ArtifactPath, bytes)
	}
	_ = os.RemoveAll(filepath.Dir(res.Stdout.ArtifactPath))
	return d, nil
}

// timeCat runs the baseline: the same bytes through cat into /dev/null.
func timeCat(ctx context.Context, sh, head string, env []string, bytes int64) (time.Duration, error) {
	cat := exec.CommandContext(ctx, sh, "-c", fmt.Sprintf("%s -c %d /dev/zero | cat > /dev/null", head, bytes))
	cat.Env = env
	t0 := time.Now()
	if out, err := cat.CombinedOutput(); err != nil {
		return 0, demiurge.WrapError(demiurge.EINTERNAL, err, "measure drain: cat baseline failed: %s", bytes2str(out))
	}
	return time.Since(t0), nil
}

func bytes2str(b []byte) string {
	return strings.TrimSpace(string(b[:min(len(b), 200)]))
}

// residentMiB returns VmRSS of this process in MiB.
func residentMiB() (float64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, demiurge.WrapError(demiurge.EUNSUPPORTED, err, "resident set size needs /proc/self/status")
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				kib, err := strconv.ParseFloat(f[0], 64)
				if err == nil {
					return kib / 1024, nil
				}
			}
		}
	}
	return 0, demiurge.Errorf(demiurge.EINTERNAL, "no VmRSS in /proc/self/status")
}

// MeasureKillLatency runs a tree that ignores SIGTERM — a shell with TERM
// ignored, a child inheriting that, and a grandchild that left the session
// with setsid — under a 300 ms timeout (longer when the tree had not even
// started by then), and returns the time from the timeout to the whole
// tree being gone and reaped (the target is at most 400 ms). It checks that none of the tree's processes survived. A non-nil
// box runs the tree inside the sandbox.
func MeasureKillLatency(ctx context.Context, box *sandbox.Policy) (time.Duration, error) {
	m, err := process.NewManager(process.ManagerOptions{})
	if err != nil {
		return 0, err
	}
	defer m.Close(context.WithoutCancel(ctx))
	// The tree must be whole (both descendants started) when the timeout
	// fires, or there is nothing to measure: on a loaded machine starting
	// the sandbox alone can take longer than 300 ms, so a run that timed
	// out before the tree printed its pids is tried again with a longer
	// timeout. The figure is always the time after the timeout.
	var res process.Result
	var timeout time.Duration
	var pids []string
	for _, timeout = range []time.Duration{300 * time.Millisecond, 2 * time.Second, 10 * time.Second} {
		res, err = m.Run(ctx, process.Spec{
			Argv:    []string{"/bin/sh", "-c", `trap '' TERM; setsid sleep 1000 & echo $!; sleep 1000 & echo $!; wait`},
			Env:     []string{"PATH=" + os.Getenv("PATH")},
			Timeout: timeout,
			Sandbox: box,
		})
		if err != nil {
			return 0, err
		}
		if !res.TimedOut {
			return 0, demiurge.Errorf(demiurge.EINTERNAL, "measure kill latency: the tree ended by itself (exit %d)", res.ExitCode)
		}
		if pids = strings.Fields(res.Stdout.Tail); len(pids) == 2 {
			break
		}
	}
	if len(pids) != 2 {
		return 0, demiurge.Errorf(demiurge.EINTERNAL, "measure kill latency: want two descendant pids, got %q", res.Stdout.Tail)
	}
	if box != nil {
		// Inside the sandbox the printed pids are the namespace's own:
		// look for any process still carrying the tree's spawn id.
		if pid := process.TreeMember(res.SpawnID); pid != 0 {
			return 0, demiurge.Errorf(demiurge.EINTERNAL, "measure kill latency: pid %d of the sandboxed tree survived", pid)
		}
		pids = nil
	}
	for _, s := range append(pids, strconv.Itoa(res.PID)) {
		pid, err := strconv.Atoi(s)
		if err != nil {
			return 0, demiurge.Errorf(demiurge.EINTERNAL, "measure kill latency: bad pid %q", s)
		}
		if process.LeftInTree(pid, res.SpawnID) {
			return 0, demiurge.Errorf(demiurge.EINTERNAL, "measure kill latency: pid %d of the tree survived or was not reaped", pid)
		}
	}
	return res.Duration - timeout, nil
}

// MeasureSpawn runs `true` n times, alternately without and with the
// sandbox box, and returns the spawn-to-exit times of both, side by side.
func MeasureSpawn(ctx context.Context, box sandbox.Policy, n int) (plain, boxed []time.Duration, err error) {
	m, err := process.NewManager(process.ManagerOptions{})
	if err != nil {
		return nil, nil, err
	}
	defer m.Close(context.WithoutCancel(ctx))
	env := []string{"PATH=" + os.Getenv("PATH")}
	tr, err := exec.LookPath("true")
	if err != nil {
		return nil, nil, demiurge.WrapError(demiurge.ENOTFOUND, err, "measure spawn: true not found")
	}
	for i := range 2 * n {
		spec := process.Spec{Argv: []string{tr}, Env: env}
		if i%2 == 1 {
			spec.Sandbox = &box
		}
		t0 := time.Now()
		res, err := m.Run(ctx, spec)
		d := time.Since(t0)
		if err != nil {
			return nil, nil, err
		}
		if res.ExitCode != 0 {
			return nil, nil, demiurge.Errorf(demiurge.EINTERNAL, "measure spawn: true exited %d", res.ExitCode)
		}
		if i%2 == 1 {
			boxed = append(boxed, d)
		} else {
			plain = append(plain, d)
		}
	}
	return plain, boxed, nil
}
