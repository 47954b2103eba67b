package sandbox

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fixture is a runtime home with a workspace inside it (the default
// layout), a private home outside it, and a secret file beside both.
type fixture struct {
	root, home, workspace, private, secret string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	root := t.TempDir()
	f := fixture{
		root:      root,
		home:      filepath.Join(root, "home"),
		workspace: filepath.Join(root, "home", "workspace"),
		private:   filepath.Join(root, "private"),
		secret:    filepath.Join(root, "outside-secret.txt"),
	}
	for _, d := range []string{f.workspace, f.private, filepath.Join(f.home, "runtime")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(f.home, "config.yaml"), "runtime: {}\n")
	write(t, filepath.Join(f.home, "runtime", "runtime.sqlite3"), "db")
	write(t, f.secret, "outside")
	return f
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (f fixture) profile() Profile {
	return Profile{Hidden: []string{f.home, f.secret}, UserHome: filepath.Join(f.root, "user")}
}

type ran struct {
	stdout, stderr string
	code           int
	signal         syscall.Signal
	limit          string
}

// run runs script with bash inside the sandbox and waits for it.
func run(t *testing.T, p Policy, dir, script string, env ...string) ran {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	var out, errb bytes.Buffer
	cmd := &exec.Cmd{
		Path: bash, Args: []string{"bash", "-c", script}, Dir: dir,
		Env:    append([]string{"PATH=/usr/local/bin:/usr/bin:/bin"}, env...),
		Stdout: &out, Stderr: &errb,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
	}
	l, err := Wrap(cmd, p)
	if err != nil {
		t.Fatalf("Wrap: %v", err)
	}
	if err := cmd.Start(); err != nil {
		l.Abort()
		t.Fatalf("start: %v", err)
	}
	if err := l.Started(); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("Started: %v", err)
	}
	_ = cmd.Wait()
	r := ran{stdout: out.String(), stderr: errb.String(), code: cmd.ProcessState.ExitCode()}
	r.signal, r.limit = l.Exit(cmd.ProcessState.Sys().(syscall.WaitStatus))
	return r
}

func TestSandboxHidesTheHost(t *testing.T) {
	f := newFixture(t)
	t.Setenv("DEMIURGE_TEST_HOST_SECRET", "host-secret-value")
	p := f.profile().Policy(f.workspace, f.private)
	r := run(t, p, f.workspace, `cat /proc/$PPID/environ /proc/*/environ 2>/dev/null | tr '\0' '\n'; echo; ls /proc | grep -c '^[0-9]'`)
	if strings.Contains(r.stdout, "host-secret-value") || strings.Contains(r.stdout, "DEMIURGE_TEST_HOST_SECRET") {
		t.Fatalf("a Host variable is visible: %q", r.stdout)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if n := lines[len(lines)-1]; n == "" || len(n) > 1 {
		t.Fatalf("the sandbox sees %s processes, want a handful", n)
	}
	r = run(t, p, f.workspace, `kill -0 `+itoa(os.Getpid())+` && echo reached`)
	if strings.Contains(r.stdout, "reached") {
		t.Fatal("the Host pid is reachable")
	}
}

func TestSandboxHidesTheRuntimeHomeButNotTheWorkspaceInside(t *testing.T) {
	f := newFixture(t)
	p := f.profile().Policy(f.workspace, f.private)
	r := run(t, p, f.workspace, `cat `+f.home+`/config.yaml; cat `+f.home+`/runtime/runtime.sqlite3; cat `+f.secret+`; ls -A `+f.home+`; echo ok > inside.txt && cat inside.txt`)
	if strings.Contains(r.stdout, "runtime:") || strings.Contains(r.stdout, "db") || strings.Contains(r.stdout, "outside") {
		t.Fatalf("hidden files are readable: %q", r.stdout)
	}
	if strings.TrimSpace(r.stdout) != "workspace\nok" {
		t.Fatalf("stdout %q, want only the workspace listed and the write to succeed (stderr %q)", r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(f.workspace, "inside.txt")); err != nil || string(b) != "ok\n" {
		t.Fatalf("the workspace write did not reach the Host: %q %v", b, err)
	}
}

func TestSandboxRefusesWritesOutside(t *testing.T) {
	f := newFixture(t)
	outside := filepath.Join(f.root, "victim")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(outside, "keep.txt"), "keep")
	p := f.profile().Policy(f.workspace, f.private)
	for _, script := range []string{
		"touch " + outside + "/new",
		"rm -rf " + outside,
		"chmod 000 " + outside + "/keep.txt",
		"truncate -s 0 " + outside + "/keep.txt",
		"touch -d 2000-01-01 " + outside + "/keep.txt",
		"mv " + outside + "/keep.txt " + f.workspace + "/",
		"ln " + outside + "/keep.txt " + f.workspace + "/hard",
		"echo x > /var/tmp/demiurge-sandbox-escape",
		"umount -l " + f.home,
		"unshare -Ur sh -c 'umount -l " + f.home + "'",
	} {
		r := run(t, p, f.workspace, script)
		if r.code == 0 {
			t.Errorf("%s: exit 0, want a refusal (stderr %q)", script, r.stderr)
		}
	}
	info, err := os.Stat(filepath.Join(outside, "keep.txt"))
	if err != nil || info.Mode().Perm() != 0o600 || info.Size() != 4 {
		t.Fatalf("outside file changed: %v %v", info, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Fatal("a file was created outside the workspace")
	}
	if _, err := os.Stat("/var/tmp/demiurge-sandbox-escape"); err == nil {
		os.Remove("/var/tmp/demiurge-sandbox-escape")
		t.Fatal("a file was created in /var/tmp")
	}
	r := run(t, p, f.workspace, "touch "+outside+"/new")
	if !strings.Contains(r.stderr, "denied") && !strings.Contains(r.stderr, "Read-only") {
		t.Fatalf("stderr %q, want a permission error", r.stderr)
	}
	r = run(t, p, f.workspace, `echo tmp > "$TMPDIR/x" && cat "$TMPDIR/x" && echo shm > /dev/shm/x && cat /dev/shm/x && echo err >/dev/stderr`, "TMPDIR="+f.private)
	if r.stdout != "tmp\nshm\n" || r.code != 0 {
		t.Fatalf("private scratch space: %q %q %d", r.stdout, r.stderr, r.code)
	}
}

func TestSandboxTmpIsReadOnly(t *testing.T) {
	f := newFixture(t)
	p := Profile{Hidden: []string{f.home}}.Policy(f.workspace, f.private)
	r := run(t, p, f.workspace, "cat "+f.secret+"; echo x > /tmp/escape && echo wrote")
	if strings.Contains(r.stdout, "wrote") || r.stdout != "outside" {
		t.Fatalf("stdout %q: want /tmp readable and not writable", r.stdout)
	}
	if _, err := os.Stat("/tmp/escape"); err == nil {
		os.Remove("/tmp/escape")
		t.Fatal("a file was created in /tmp")
	}
}

func TestSandboxHidesCredentials(t *testing.T) {
	f := newFixture(t)
	user := filepath.Join(f.root, "user")
	for _, d := range []string{".ssh", ".aws", ".config/gh"} {
		if err := os.MkdirAll(filepath.Join(user, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(user, ".ssh", "id_rsa"), "PRIVATE KEY")
	write(t, filepath.Join(user, ".aws", "credentials"), "aws_secret")
	write(t, filepath.Join(user, ".config", "gh", "hosts.yml"), "gh_token")
	write(t, filepath.Join(user, ".netrc"), "machine x password netrc_pw")
	write(t, filepath.Join(user, "notes.txt"), "public notes")
	p := f.profile().Policy(f.workspace, f.private)
	r := run(t, p, f.workspace, "cat "+user+"/.ssh/id_rsa "+user+"/.aws/credentials "+user+"/.config/gh/hosts.yml "+user+"/.netrc "+user+"/notes.txt")
	for _, s := range []string{"PRIVATE KEY", "aws_secret", "gh_token", "netrc_pw"} {
		if strings.Contains(r.stdout, s) {
			t.Errorf("credential %q readable", s)
		}
	}
	if !strings.Contains(r.stdout, "public notes") {
		t.Errorf("ordinary files of the user's home should stay readable: %q", r.stdout)
	}
}

func TestSandboxKillsDaemonsWithTheCommand(t *testing.T) {
	f := newFixture(t)
	p := f.profile().Policy(f.workspace, f.private)
	marker := "demiurge-daemon-" + itoa(os.Getpid())
	start := time.Now()
	r := run(t, p, f.workspace, `(setsid bash -c 'exec -a `+marker+` sleep 300' </dev/null >/dev/null 2>&1 &); (env -i bash -c '(exec -a `+marker+` sleep 300 &) ' </dev/null >/dev/null 2>&1); nohup sleep 300 >/dev/null 2>&1 & echo started`)
	if r.stdout != "started\n" {
		t.Fatalf("stdout %q stderr %q", r.stdout, r.stderr)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("the command waited for its daemons")
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		out, _ := exec.Command("pgrep", "-f", marker).Output()
		if len(bytes.TrimSpace(out)) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemons survived the command: %s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSandboxNetworkOff(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	port := itoa(ln.Addr().(*net.TCPAddr).Port)
	f := newFixture(t)
	script := `exec 3<>/dev/tcp/127.0.0.1/` + port + ` && head -1 <&3`
	on := f.profile()
	if r := run(t, on.Policy(f.workspace, f.private), f.workspace, script); r.stdout != "hello\n" {
		t.Fatalf("network on: %q %q", r.stdout, r.stderr)
	}
	off := f.profile()
	off.Settings.NoNetwork = true
	if r := run(t, off.Policy(f.workspace, f.private), f.workspace, script); r.code == 0 || strings.Contains(r.stdout, "hello") {
		t.Fatalf("network off reached loopback: %q", r.stdout)
	}
}

func TestSandboxReportsLimitsAndSignals(t *testing.T) {
	f := newFixture(t)
	p := f.profile().Policy(f.workspace, f.private)
	r := run(t, p, f.workspace, `kill -KILL $$`)
	if r.signal != syscall.SIGKILL || r.code != 128+9 || r.limit != "" {
		t.Fatalf("got %+v", r)
	}
	r = run(t, p, f.workspace, `kill -XFSZ $$`)
	if r.signal != syscall.SIGXFSZ || !strings.Contains(r.limit, "file size limit") {
		t.Fatalf("got %+v", r)
	}
	r = run(t, p, f.workspace, `exit 7`)
	if r.code != 7 || r.signal != 0 {
		t.Fatalf("got %+v", r)
	}
}

func TestSandboxStartFailures(t *testing.T) {
	f := newFixture(t)
	p := f.profile()
	p.SimulateMissing = "user namespaces"
	cmd := &exec.Cmd{Path: "/bin/true", Args: []string{"true"}}
	_, err := Wrap(cmd, p.Policy(f.workspace))
	var ue *UnavailableError
	if !errors.As(err, &ue) || ue.Feature != "user namespaces" || !strings.Contains(err.Error(), "sandbox.mode: off") {
		t.Fatalf("Wrap with a missing feature: %v", err)
	}
	if r := Probe(p.Settings, p.Policy(f.workspace)); r.Working || !strings.Contains(r.Error, "user namespaces") {
		t.Fatalf("Probe with a missing feature: %+v", r)
	}
	if r := Probe(Settings{}, f.profile().Policy(f.workspace)); !r.Working || r.Error != "" || len(r.Missing) != 0 {
		t.Fatalf("Probe on this kernel: %+v", r)
	}
	// An executable that does not exist fails the start, with the reason.
	cmd = &exec.Cmd{Path: filepath.Join(f.workspace, "missing"), Args: []string{"missing"}, Dir: f.workspace}
	l, err := Wrap(cmd, f.profile().Policy(f.workspace))
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err = l.Started()
	_ = cmd.Wait()
	l.Release()
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("Started for a missing executable: %v", err)
	}
	// A relative writable path is refused before anything starts.
	if _, err := Wrap(&exec.Cmd{Path: "/bin/true"}, Policy{Writable: []string{"rel"}}); err == nil {
		t.Fatal("a relative writable path was accepted")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// A writable directory that is itself a hidden one (a workspace at the
// runtime home) is visible, and what is hidden inside it stays hidden.
func TestSandboxWritableEqualToHidden(t *testing.T) {
	f := newFixture(t)
	p := Profile{Hidden: []string{f.home, filepath.Join(f.home, "config.yaml"), filepath.Join(f.home, "runtime")}}.Policy(f.home, f.private)
	r := run(t, p, f.home, "ls -A; cat config.yaml; ls -A runtime")
	if strings.Contains(r.stdout, "runtime:") || strings.Contains(r.stdout, "runtime.sqlite3") || !strings.Contains(r.stdout, "workspace") {
		t.Fatalf("stdout %q stderr %q", r.stdout, r.stderr)
	}
}

func TestSandboxLimitsAndPrivileges(t *testing.T) {
	f := newFixture(t)
	p := f.profile().Policy(f.workspace, f.private)
	r := run(t, p, f.workspace, "ulimit -u; ulimit -f; grep -E '^(NoNewPrivs|CapEff|CapBnd)' /proc/self/status")
	// ulimit -f counts 1024-byte blocks: 8 GiB.
	want := "4096\n8388608\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nNoNewPrivs:\t1\n"
	if r.stdout != want {
		t.Fatalf("stdout %q, want %q (stderr %q)", r.stdout, want, r.stderr)
	}
}
