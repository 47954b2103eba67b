package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/demiurge/demiurge/cmd/bench/internal/procstat"
)

// memoryTarget is figure 4's limit on idle VmRSS, in MiB.
const memoryTarget = 40.0

// chatTimeout bounds the whole chat measurement: start, reply, idle, exit.
const chatTimeout = 2 * time.Minute

// memoryRows measures figure 4: the resident memory of an idle `demiurge
// chat` process that has answered one message.
func memoryRows(ctx context.Context, bin, dir string, c counts) ([]row, error) {
	if runtime.GOOS != "linux" {
		return []row{{figure: figMemory, value: "n/a (needs /proc)", target: fmt.Sprintf("≤ %g MiB", memoryTarget)}}, nil
	}
	home, workspace := filepath.Join(dir, "home"), filepath.Join(dir, "workspace")
	if err := os.MkdirAll(workspace, 0o700); err != nil {
		return nil, err
	}
	if _, _, err := runChild(ctx, bin, home, workspace, "init"); err != nil {
		return nil, err
	}
	rss, hwm, err := idleChatRSS(ctx, bin, home, workspace, c.idle)
	if err != nil {
		return nil, err
	}
	return []row{
		{figure: figMemory + ", VmRSS", value: fmt.Sprintf("%.1f MiB", rss), target: fmt.Sprintf("≤ %g MiB", memoryTarget), verdict: check(rss <= memoryTarget)},
		{figure: figMemory + ", peak (VmHWM)", value: fmt.Sprintf("%.1f MiB", hwm)},
	}, nil
}

// idleChatRSS starts `demiurge chat`, sends "hello", waits for the reply
// and idle, reads VmRSS and VmHWM (MiB), then closes stdin and reaps the
// process, which must exit 0. On any failure the process is killed and
// reaped before returning.
func idleChatRSS(ctx context.Context, bin, home, workspace string, idle time.Duration) (rss, hwm float64, err error) {
	ctx, cancel := context.WithTimeout(ctx, chatTimeout)
	defer cancel()
	cmd := demiurgeCmd(ctx, bin, home, workspace, "chat")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, 0, err
	}
	stdout, stderr := newWatcher("[fake] hello"), newWatcher("")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		return 0, 0, fmt.Errorf("start demiurge chat: %w", err)
	}
	reaped := false
	defer func() {
		if !reaped {
			cancel() // kills the child
			cmd.Wait()
		}
	}()
	failure := func(what string, err error) error {
		return fmt.Errorf("demiurge chat: %s: %v (stdout %q, stderr %q)", what, err, stdout.String(), stderr.String())
	}

	if _, err := io.WriteString(stdin, "hello\n"); err != nil {
		return 0, 0, failure("send hello", err)
	}
	select {
	case <-stdout.found:
	case <-ctx.Done():
		return 0, 0, failure("waiting for the reply", ctx.Err())
	}
	select {
	case <-time.After(idle):
	case <-ctx.Done():
		return 0, 0, failure("idle", ctx.Err())
	}
	status, err := procstat.Status(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		return 0, 0, failure("read /proc status", err)
	}
	if err := stdin.Close(); err != nil {
		return 0, 0, failure("close stdin", err)
	}
	reaped = true
	if err := cmd.Wait(); err != nil {
		return 0, 0, failure("exit after stdin closed", err)
	}
	return status["VmRSS"], status["VmHWM"], nil
}
