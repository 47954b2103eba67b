package process

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
)

func TestRunOutputExitAndArtifacts(t *testing.T) {
	m := mustManager(t)
	res, err := m.Run(context.Background(), Spec{
		Argv: sh("echo out; echo err >&2; exit 3"), Env: testEnv(), SessionID: "sess-1",
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || res.Signal != "" || res.TimedOut || res.Cancelled {
		t.Fatalf("result %+v", res)
	}
	if res.Stdout.Tail != "out\n" || res.Stderr.Tail != "err\n" || res.Stdout.TotalBytes != 4 || res.Stderr.TotalChars != 4 {
		t.Fatalf("streams %+v %+v", res.Stdout, res.Stderr)
	}
	if res.Resolved != "/bin/sh" || res.PID <= 0 || !strings.HasPrefix(res.SpawnID, "proc_") || res.StartMarker == "" {
		t.Fatalf("identity %+v", res)
	}
	wantDir := filepath.Join(m.root, sessionDirName("sess-1"), res.SpawnID)
	for _, c := range []struct {
		path, content string
	}{{res.Stdout.ArtifactPath, "out\n"}, {res.Stderr.ArtifactPath, "err\n"}} {
		if filepath.Dir(c.path) != wantDir {
			t.Fatalf("artifact %s not in %s", c.path, wantDir)
		}
		b, err := os.ReadFile(c.path)
		if err != nil || string(b) != c.content {
			t.Fatalf("artifact %s = %q, %v", c.path, b, err)
		}
		if fi, _ := os.Stat(c.path); fi.Mode().Perm() != 0o600 {
			t.Fatalf("artifact mode %v, want 0600", fi.Mode().Perm())
		}
	}
	for _, dir := range []string{wantDir, filepath.Dir(wantDir)} {
		if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
			t.Fatalf("dir %s mode %v, want 0700", dir, fi.Mode().Perm())
		}
	}
	if len(sessionDirName("x")) != 32 {
		t.Fatalf("session dir name %q", sessionDirName("x"))
	}
}

func TestRunEmptyStreamHasNoArtifact(t *testing.T) {
	m := mustManager(t)
	res, err := m.Run(context.Background(), Spec{Argv: sh("true"), Env: testEnv(), SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout.ArtifactPath != "" || res.Stderr.ArtifactPath != "" {
		t.Fatalf("artifact paths for empty streams: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(m.root, sessionDirName("s"), res.SpawnID)); !os.IsNotExist(err) {
		t.Fatalf("empty spawn directory left: %v", err)
	}
}

func TestEnvironmentIsExactlyTheSpec(t *testing.T) {
	m := mustManager(t)
	t.Setenv("DEMIURGE_TEST_HOST_ONLY", "leak")
	env := append(testEnv(), "A=1", TreeEnv+"=forged")
	res, err := m.Run(context.Background(), Spec{Argv: []string{"env"}, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(res.Stdout.Tail), "\n")
	want := append(testEnv(), "A=1", TreeEnv+"="+res.SpawnID)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("env = %q, want %q", got, want)
	}
}

func TestExecutableResolvedInCommandPath(t *testing.T) {
	m := mustManager(t)
	dir := t.TempDir()
	tool := filepath.Join(dir, "only-here")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\necho tool ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := m.Run(context.Background(), Spec{Argv: []string{"only-here"}, Env: []string{"PATH=relative:" + dir}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Resolved != tool || res.Stdout.Tail != "tool ran\n" {
		t.Fatalf("resolved %q, output %q", res.Resolved, res.Stdout.Tail)
	}
	_, err = m.Run(context.Background(), Spec{Argv: []string{"only-here"}, Env: testEnv()})
	if demiurge.ErrorCode(err) != demiurge.ENOTFOUND {
		t.Fatalf("outside the command's PATH: %v, want ENOTFOUND", err)
	}
	if _, err := m.Run(context.Background(), Spec{Env: testEnv()}); demiurge.ErrorCode(err) != demiurge.EINVALID {
		t.Fatalf("empty argv: %v, want EINVALID", err)
	}
}

// TestTimeoutKillsTermIgnoringTree: the shell and its child ignore SIGTERM;
// the tree is gone within about 400 ms of the timeout. A loaded machine can
// delay any one attempt, so the best of three counts.
func TestTimeoutKillsTermIgnoringTree(t *testing.T) {
	m := mustManager(t)
	const timeout = 200 * time.Millisecond
	best := time.Hour
	for range 3 {
		res, err := m.Run(context.Background(), Spec{
			Argv: sh(`trap '' TERM; sleep 100 & echo $!; sleep 100`), Env: testEnv(), Timeout: timeout,
		})
		if err != nil {
			t.Fatal(err)
		}
		if !res.TimedOut || res.Cancelled || res.Signal != "SIGKILL" || res.ExitCode != 128+9 {
			t.Fatalf("result %+v", res)
		}
		for _, pid := range readPIDs(t, res.Stdout.Tail) {
			if !gone(pid, res.SpawnID) {
				t.Fatalf("child %d survived", pid)
			}
		}
		latency := res.Duration - timeout
		t.Logf("timeout to tree gone: %v", latency)
		if latency < m.killGrace {
			t.Fatalf("tree gone %v after the timeout, before the grace ended: it did not ignore SIGTERM", latency)
		}
		best = min(best, latency)
		if best <= 400*time.Millisecond {
			return
		}
	}
	t.Fatalf("tree gone %v after the timeout at best, want ≤ 400ms", best)
}

// TestSetsidGrandchildKilled: a grandchild that left the session (setsid)
// is still part of the tree, on cancel and on timeout.
func TestSetsidGrandchildKilled(t *testing.T) {
	for _, how := range []string{"cancel", "timeout"} {
		t.Run(how, func(t *testing.T) {
			m := mustManager(t)
			pidFile := filepath.Join(t.TempDir(), "pid")
			spec := Spec{Argv: sh(`setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > ` + pidFile + `; sleep 1000`), Env: testEnv()}
			if how == "timeout" {
				spec.Timeout = time.Second
			}
			h, err := m.Start(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			pids := readPIDs(t, waitFile(t, pidFile, 1))
			var res Result
			if how == "cancel" {
				res, err = h.Cancel(context.Background())
			} else {
				res, err = h.Wait(context.Background())
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Cancelled != (how == "cancel") || res.TimedOut != (how == "timeout") {
				t.Fatalf("result %+v", res)
			}
			if !gone(pids[0], res.SpawnID) {
				t.Fatalf("setsid grandchild %d survived", pids[0])
			}
		})
	}
}

// TestDoubleForkedDaemonKilled: a grandchild that double-forked, left the
// session and closed every inherited descriptor is orphaned to the Host;
// it is still found (TreeEnv) and killed and reaped when the command ends,
// whether the command ran on or exited at once.
func TestDoubleForkedDaemonKilled(t *testing.T) {
	for _, tc := range []struct {
		name, tail string
		timeout    time.Duration
	}{
		{name: "command exits at once", tail: ""},
		{name: "command runs until timeout", tail: "; sleep 1000", timeout: 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mustManager(t)
			pidFile := filepath.Join(t.TempDir(), "pid")
			script := `(setsid sh -c 'echo $$ > ` + pidFile + `; exec sleep 1000' </dev/null >/dev/null 2>&1 &)` +
				`; while [ ! -s ` + pidFile + ` ]; do sleep 0.01; done` + tc.tail
			res, err := m.Run(context.Background(), Spec{Argv: sh(script), Env: testEnv(), Timeout: tc.timeout})
			if err != nil {
				t.Fatal(err)
			}
			pids := readPIDs(t, waitFile(t, pidFile, 1))
			if !gone(pids[0], res.SpawnID) {
				t.Fatalf("daemon %d survived: %+v", pids[0], res)
			}
		})
	}
}

// TestStdoutClosedEarly: the command closes stdout and keeps running,
// writing to stderr; the drains neither deadlock nor end the command early.
func TestStdoutClosedEarly(t *testing.T) {
	m := mustManager(t)
	res, err := m.Run(context.Background(), Spec{
		Argv: sh(`echo first; exec 1>&-; sleep 0.3; echo still running >&2`), Env: testEnv(), Timeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.TimedOut || res.Stdout.Tail != "first\n" || res.Stderr.Tail != "still running\n" {
		t.Fatalf("result %+v", res)
	}
	// Duration starts once the command was started, a little after the
	// shell began, so only a run cut short at stdout's close (about 0 s) is
	// an early end.
	if res.Duration < 200*time.Millisecond {
		t.Fatalf("finished after %v, before the command did", res.Duration)
	}
}

// TestGrandchildHoldingPipeIsBounded: the command exits while a background
// child keeps its stdout open; output is awaited for the wait delay only,
// then the child is killed.
func TestGrandchildHoldingPipeIsBounded(t *testing.T) {
	m := mustManager(t)
	m.waitDelay = 200 * time.Millisecond
	res, err := m.Run(context.Background(), Spec{
		Argv: sh(`(sleep 0.05; echo late; exec sleep 1000) & echo $!`), Env: testEnv(), Timeout: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(res.Stdout.Tail)
	if len(lines) != 2 || lines[1] != "late" {
		t.Fatalf("stdout %q, want the pid and the late line", res.Stdout.Tail)
	}
	if res.TimedOut || res.Cancelled || res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
	if res.Duration > 5*time.Second {
		t.Fatalf("took %v", res.Duration)
	}
	if pid := readPIDs(t, lines[0])[0]; !gone(pid, res.SpawnID) {
		t.Fatalf("pipe holder %d survived", pid)
	}
}

// TestLargeOutputBoundedMemory: 200 MiB through tails, redaction and
// artifacts with bounded memory, exact counts and the right tail.
func TestLargeOutputBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("200 MiB of output")
	}
	m := mustManager(t)
	const total = 200 << 20
	const line = "0123456789abcdefghijklmnopqrstuvwxyz" // 37 bytes with the newline
	runtime.GC()
	before := residentKiB(t)
	var peak int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			peak = max(peak, residentKiB(t))
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	res, err := m.Run(context.Background(), Spec{
		Argv: sh("yes " + line + " | head -c 209715200"), Env: testEnv(), SessionID: "big",
		Redact: map[string]string{"not-in-the-output": "<redacted:X>"},
	})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	growth := float64(peak-before) / 1024
	t.Logf("RSS growth %.1f MiB over %d MiB of output in %v", growth, total>>20, res.Duration)
	if growth > 32 {
		t.Errorf("RSS grew %.1f MiB, want ≤ 32", growth)
	}
	if res.Stdout.TotalBytes != total || res.Stdout.TotalChars != total || !res.Stdout.Truncated {
		t.Fatalf("stdout counters %+v", res.Stdout)
	}
	unit := line + "\n"
	full := strings.Repeat(unit, DefaultTailChars/len(unit)+2)
	// The stream is the unit repeated and cut at total bytes.
	end := total % len(unit)
	wantTail := (full + unit[:end])[len(full)+end-DefaultTailChars:]
	if res.Stdout.Tail != wantTail {
		t.Fatalf("tail ends %q, want %q", res.Stdout.Tail[len(res.Stdout.Tail)-40:], wantTail[len(wantTail)-40:])
	}
	fi, err := os.Stat(res.Stdout.ArtifactPath)
	if err != nil || fi.Size() != total {
		t.Fatalf("artifact %v, %v", fi, err)
	}
}

func TestNonUTF8Output(t *testing.T) {
	m := mustManager(t)
	res, err := m.Run(context.Background(), Spec{Argv: sh(`printf 'a\377\376b\342\202'`), Env: testEnv()})
	if err != nil {
		t.Fatal(err)
	}
	want := Stream{Tail: "a\ufffd\ufffdb\ufffd\ufffd", TotalBytes: 6, TotalChars: 6, ArtifactPath: res.Stdout.ArtifactPath}
	if res.Stdout != want {
		t.Fatalf("stdout %+v, want %+v", res.Stdout, want)
	}
	if b, _ := os.ReadFile(res.Stdout.ArtifactPath); string(b) != "a\377\376b\342\202" {
		t.Fatalf("artifact %q keeps the raw bytes", b)
	}
}

// TestSecretSplitAcrossWrites: a bound value written in two halves with a
// pause between them is redacted in the tail, the artifact and the chunks.
func TestSecretSplitAcrossWrites(t *testing.T) {
	m := mustManager(t)
	const secret = "ghp_SplitSecretValue1234"
	var mu sync.Mutex
	var chunks []string
	for _, stream := range []string{"stdout", "stderr"} {
		redir := ""
		if stream == "stderr" {
			redir = " >&2"
		}
		t.Run(stream, func(t *testing.T) {
			chunks = nil
			h, err := m.Start(context.Background(), Spec{
				Argv: sh(`printf 'token=` + secret[:10] + `'` + redir + `; sleep 0.2; printf '` + secret[10:] + ` end\n'` + redir),
				Env:  testEnv(), Redact: map[string]string{secret: "<redacted:GH>"},
				OnChunk: func(s, text string) {
					mu.Lock()
					defer mu.Unlock()
					if s == stream {
						chunks = append(chunks, text)
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			res, err := h.Wait(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			s := res.Stdout
			if stream == "stderr" {
				s = res.Stderr
			}
			const want = "token=<redacted:GH> end\n"
			if s.Tail != want || s.TotalBytes != int64(len(want)) {
				t.Fatalf("tail %q (%d bytes), want %q", s.Tail, s.TotalBytes, want)
			}
			if b, _ := os.ReadFile(s.ArtifactPath); string(b) != want {
				t.Fatalf("artifact %q, want %q", b, want)
			}
			mu.Lock()
			joined := strings.Join(chunks, "")
			mu.Unlock()
			if joined != want || len(chunks) < 2 {
				t.Fatalf("chunks %q, want %q in at least two", chunks, want)
			}
		})
	}
}

// failingWriter fails with ENOSPC once more than room bytes were written.
type failingWriter struct {
	w    io.Writer
	room int
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.room {
		n, _ := f.w.Write(p[:f.room])
		f.room = 0
		return n, &os.PathError{Op: "write", Path: "/secret/path", Err: syscall.ENOSPC}
	}
	f.room -= len(p)
	return f.w.Write(p)
}

// TestArtifactFailure: in the foreground the command runs to its end with
// its output drained and the failure reported; in the background the tree
// is terminated.
func TestArtifactFailure(t *testing.T) {
	m := mustManager(t)
	m.artifactHook = func(stream string, w io.Writer) io.Writer {
		if stream == "stdout.log" {
			return &failingWriter{w: w, room: 1000}
		}
		return w
	}
	const n = 4 << 20
	res, err := m.Run(context.Background(), Spec{Argv: sh("head -c 4194304 /dev/zero; echo fine >&2"), Env: testEnv(), SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	var ae *ArtifactError
	if !errors.As(res.ArtifactErr, &ae) || ae.Stderr != nil || !errors.Is(res.ArtifactErr, syscall.ENOSPC) {
		t.Fatalf("ArtifactErr %#v", res.ArtifactErr)
	}
	if got := res.ArtifactErr.Error(); got != "stdout=ENOSPC" {
		t.Fatalf("message %q, want stdout=ENOSPC (no path, no text)", got)
	}
	if res.ExitCode != 0 || res.Stdout.TotalBytes != n || res.Stdout.ArtifactPath != "" || res.Stderr.Tail != "fine\n" || res.Stderr.ArtifactPath == "" {
		t.Fatalf("result %+v", res)
	}
	entries, _ := os.ReadDir(filepath.Dir(res.Stderr.ArtifactPath))
	if len(entries) != 1 {
		t.Fatalf("spawn directory holds %d files, want only stderr.log", len(entries))
	}

	h, err := m.Start(context.Background(), Spec{Argv: sh("yes"), Env: testEnv(), SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err = h.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.ArtifactErr == nil || res.Cancelled || res.Signal == "" {
		t.Fatalf("background result %+v", res)
	}
}

func TestArtifactErrorMessage(t *testing.T) {
	e := &ArtifactError{Stdout: &os.PathError{Op: "write", Path: "/x", Err: syscall.EIO}, Stderr: io.ErrShortWrite}
	if got, want := e.Error(), "stdout=EIO, stderr=short_write"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}

// TestConcurrentCancel: many callers, one SIGTERM, one Result.
func TestConcurrentCancel(t *testing.T) {
	m := mustManager(t)
	m.killGrace = time.Second // time for the shell to run its trap on a loaded machine
	ready := make(chan struct{})
	var once sync.Once
	h, err := m.Start(context.Background(), Spec{
		Argv: []string{"/bin/bash", "-c", `trap 'echo TERM >&2' TERM; echo ready; while :; do sleep 0.01; done`}, Env: testEnv(),
		OnChunk: func(stream, text string) {
			if stream == "stdout" && strings.Contains(text, "ready") {
				once.Do(func() { close(ready) })
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-ready:
	case <-time.After(5 * time.Second):
		t.Fatal("command did not start")
	}
	const callers = 8
	results := make([]Result, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			r, err := h.Cancel(context.Background())
			if err != nil {
				t.Error(err)
			}
			results[i] = r
		})
	}
	wg.Wait()
	for i := range results {
		if !reflect.DeepEqual(results[i], results[0]) {
			t.Fatalf("caller %d got %+v, caller 0 %+v", i, results[i], results[0])
		}
	}
	if !results[0].Cancelled || results[0].Signal != "SIGKILL" {
		t.Fatalf("result %+v", results[0])
	}
	if got := strings.Count(results[0].Stderr.Tail, "TERM"); got != 1 {
		t.Fatalf("the shell saw %d SIGTERMs, want 1 (stderr %q)", got, results[0].Stderr.Tail)
	}
	if r, err := h.Wait(context.Background()); err != nil || !reflect.DeepEqual(r, results[0]) {
		t.Fatalf("Wait after Cancel: %+v, %v", r, err)
	}
}

func TestRunContextCancel(t *testing.T) {
	m := mustManager(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res, err := m.Run(ctx, Spec{Argv: sh("setsid sleep 1000 & sleep 1000"), Env: testEnv()})
	if demiurge.ErrorCode(err) != demiurge.ECANCELED || !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want ECANCELED", err)
	}
	if !res.Cancelled || res.SpawnID == "" {
		t.Fatalf("result %+v", res)
	}
}

func TestWaitConcurrentCallersShareResult(t *testing.T) {
	m := mustManager(t)
	h, err := m.Start(context.Background(), Spec{Argv: sh("sleep 0.1; echo done"), Env: testEnv()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	if _, err := h.Wait(ctx); demiurge.ErrorCode(err) != demiurge.ECANCELED {
		t.Fatalf("Wait past its ctx: %v", err)
	}
	cancel()
	var wg sync.WaitGroup
	results := make([]Result, 4)
	for i := range results {
		wg.Go(func() { results[i], _ = h.Wait(context.Background()) })
	}
	wg.Wait()
	for i := range results {
		if !reflect.DeepEqual(results[i], results[0]) || results[i].Stdout.Tail != "done\n" {
			t.Fatalf("result %d: %+v", i, results[i])
		}
	}
	// Cancel after the end signals nothing and reports the same Result.
	if r, _ := h.Cancel(context.Background()); !reflect.DeepEqual(r, results[0]) || r.Cancelled {
		t.Fatalf("Cancel after the end: %+v", r)
	}
}

// TestManagerCloseKillsEverything: Close ends every live tree, including
// setsid grandchildren, and refuses new commands.
func TestManagerCloseKillsEverything(t *testing.T) {
	m := mustManager(t)
	dir := t.TempDir()
	var handles []*Handle
	for i := range 3 {
		pidFile := filepath.Join(dir, strconv.Itoa(i))
		h, err := m.Start(context.Background(), Spec{
			Argv: sh(`trap '' TERM; setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > ` + pidFile + `; sleep 1000`), Env: testEnv(),
		})
		if err != nil {
			t.Fatal(err)
		}
		handles = append(handles, h)
	}
	var pids []int
	for i := range handles {
		pids = append(pids, readPIDs(t, waitFile(t, filepath.Join(dir, strconv.Itoa(i)), 1))...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for i, h := range handles {
		res, err := h.Wait(context.Background())
		if err != nil || !res.Cancelled {
			t.Fatalf("handle %d after Close: %+v, %v", i, res, err)
		}
		if !gone(pids[i], res.SpawnID) || !gone(h.PID(), res.SpawnID) {
			t.Fatalf("tree %d survived Close", i)
		}
	}
	if _, err := m.Run(context.Background(), Spec{Argv: sh("true"), Env: testEnv()}); demiurge.ErrorCode(err) != demiurge.EUNAVAILABLE {
		t.Fatalf("Run after Close: %v, want EUNAVAILABLE", err)
	}
}

// TestKillGroupIfSame: a wrong marker signals nothing; the right one ends
// the group, TERM-ignoring members included.
func TestKillGroupIfSame(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", `trap '' TERM; sleep 1000 & sleep 1000`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(waited)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-waited
		// This process is a subreaper (an earlier NewManager made it one):
		// the group's orphans came here. In real restart recovery they
		// belong to another process.
		reapGroup(t, cmd.Process.Pid)
	})
	pid := cmd.Process.Pid
	marker, err := StartMarker(pid)
	if err != nil {
		t.Fatal(err)
	}
	err = KillGroupIfSame(pid, marker+"0")
	if demiurge.ErrorCode(err) != demiurge.ENOTFOUND {
		t.Fatalf("wrong marker: %v, want ENOTFOUND", err)
	}
	time.Sleep(50 * time.Millisecond)
	if !Alive(pid, marker) {
		t.Fatal("a wrong marker still signalled the process")
	}
	if err := KillGroupIfSame(pid, ""); demiurge.ErrorCode(err) != demiurge.EINVALID {
		t.Fatalf("empty marker: %v", err)
	}
	t0 := time.Now()
	if err := KillGroupIfSame(pid, marker); err != nil {
		t.Fatal(err)
	}
	t.Logf("group gone in %v", time.Since(t0))
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("leader still running")
	}
	tab := make(map[int]procEntry)
	if err := scanProcs(tab, make([]byte, statBufSize)); err != nil {
		t.Fatal(err)
	}
	for _, e := range tab {
		if (e.pgrp == pid || e.sid == pid) && e.state != 'Z' {
			t.Fatalf("group member %d survived", e.pid)
		}
	}
	if err := KillGroupIfSame(pid, marker); demiurge.ErrorCode(err) != demiurge.ENOTFOUND {
		t.Fatalf("after the end: %v, want ENOTFOUND", err)
	}
}

// TestSignalExactRefusesRecycledPID: a start time that does not match means
// another process holds the pid; it is not signalled.
func TestSignalExactRefusesRecycledPID(t *testing.T) {
	cmd := exec.Command("sleep", "1000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	buf := make([]byte, statBufSize)
	e, ok := readProcStat(cmd.Process.Pid, buf)
	if !ok {
		t.Fatal("no stat")
	}
	signalExact(e.pid, e.start+1, syscall.SIGKILL, buf)
	time.Sleep(50 * time.Millisecond)
	if e2, ok := readProcStat(e.pid, buf); !ok || e2.state == 'Z' {
		t.Fatal("a process with another start time was signalled")
	}
	signalExact(e.pid, e.start, syscall.SIGKILL, buf)
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("exact signal: %v", err)
	}
}

// TestAdoptedOrphansReapedWhileRunning: orphans that exit while their
// command still runs are reaped by the tracker, not left as zombies until
// the command ends.
func TestAdoptedOrphansReapedWhileRunning(t *testing.T) {
	m := mustManager(t)
	h, err := m.Start(context.Background(), Spec{
		Argv: sh(`for i in 1 2 3; do (setsid sleep 0.5 </dev/null >/dev/null 2>&1 &); done; sleep 1000`), Env: testEnv(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Cancel(context.Background())
	// Orphans seen while alive (tracked every 0.1 s), exited (0.5 s),
	// reaped by the next track.
	time.Sleep(1500 * time.Millisecond)
	tab := make(map[int]procEntry)
	if err := scanProcs(tab, make([]byte, statBufSize)); err != nil {
		t.Fatal(err)
	}
	for _, e := range tab {
		if e.state == 'Z' && e.ppid == os.Getpid() {
			t.Fatalf("zombie %d left while the command runs", e.pid)
		}
	}
	if res, err := h.Cancel(context.Background()); err != nil || !res.Cancelled {
		t.Fatalf("cancel: %+v, %v", res, err)
	}
}

func TestStartErrors(t *testing.T) {
	m := mustManager(t)
	_, err := m.Run(context.Background(), Spec{Argv: sh("true"), Env: testEnv(), Dir: filepath.Join(t.TempDir(), "missing")})
	if demiurge.ErrorCode(err) != demiurge.ENOTFOUND || !strings.Contains(err.Error(), "working directory") {
		t.Fatalf("missing dir: %v, want ENOTFOUND naming the working directory", err)
	}
	_, err = m.Run(context.Background(), Spec{Argv: sh("true"), Env: testEnv(), Timeout: -time.Second})
	if demiurge.ErrorCode(err) != demiurge.EINVALID {
		t.Fatalf("negative timeout: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Start(ctx, Spec{Argv: sh("true"), Env: testEnv()}); demiurge.ErrorCode(err) != demiurge.ECANCELED {
		t.Fatalf("cancelled start: %v", err)
	}
}

// reapGroup reaps the exited children of this process in process group
// pgid, waiting up to 2 s for them to exit.
func reapGroup(t *testing.T, pgid int) {
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-pgid, &ws, syscall.WNOHANG, nil)
		if err == syscall.ECHILD {
			return
		}
		if pid <= 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	t.Errorf("children in group %d not reaped", pgid)
}

// TestUnattributedPipeHolderIsBounded: an orphan that cleared its
// environment and left the session cannot be attributed once its parent is
// gone; if it keeps the output pipe open the pipe is closed under it after
// drainJoin, and the Result still comes.
func TestUnattributedPipeHolderIsBounded(t *testing.T) {
	m := mustManager(t)
	// Long enough for the orphan to write its pid on a loaded machine
	// before the tree is judged; short against the 10 s bound below.
	m.waitDelay = time.Second
	pidFile := filepath.Join(t.TempDir(), "pid")
	t0 := time.Now()
	res, err := m.Run(context.Background(), Spec{
		Argv: sh(`(env -i /bin/sh -c 'echo $$ > ` + pidFile + `; exec setsid sleep 1000' &)`), Env: testEnv(), Timeout: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	pid := readPIDs(t, waitFile(t, pidFile, 1))[0]
	t.Cleanup(func() {
		// Kill and reap it if it escaped; it is a child of this subreaper.
		if e, ok := readProcStat(pid, make([]byte, statBufSize)); ok && e.ppid == os.Getpid() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, 0, nil)
		}
	})
	if d := time.Since(t0); d > 10*time.Second || res.TimedOut {
		t.Fatalf("Run took %v (result %+v)", d, res)
	}
}

func TestArtifactLimit(t *testing.T) {
	m := mustManager(t)
	res, err := m.Run(context.Background(), Spec{
		Argv: sh("head -c 100000 /dev/zero | tr '\\0' x; echo; echo password=hunter22x"), Env: testEnv(), SessionID: "sess-limit",
		ArtifactLimit: 4096, Discover: discoverPasswords,
	})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Stdout
	if !s.ArtifactTruncated || s.TotalBytes != int64(100000+1+len("password=<redacted:PASSWORD>\n")) {
		t.Fatalf("stream %+v", s)
	}
	b, err := os.ReadFile(s.ArtifactPath)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Repeat("x", 4096) + truncationMarker(4096, s.TotalBytes)
	if string(b) != want {
		t.Fatalf("artifact of %d bytes ends %q, want %d bytes ending %q", len(b), b[max(len(b)-80, 0):], len(want), want[len(want)-80:])
	}
	if !strings.HasSuffix(s.Tail, "password=<redacted:PASSWORD>\n") {
		t.Fatalf("tail ends %q", s.Tail[len(s.Tail)-40:])
	}
}
