package e2e

import (
	"bufio"
	"context"
	"encoding/json"
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

// These tests attack the terminal the way a hostile model would, through
// the CLI and the real sandbox of this kernel.

func terminalCalls(commands ...string) string {
	calls := make([]map[string]any, 0, len(commands))
	for _, c := range commands {
		calls = append(calls, map[string]any{"name": "terminal", "arguments": map[string]any{"command": c}})
	}
	b, _ := json.Marshal(calls)
	return string(b)
}

// hostCanary is a Host variable no command may see: it does not look like
// a secret, so nothing would redact it on its way into a file.
const hostCanary = "canary-value-of-the-host-3f9a"

func TestSandboxHostEnvironmentIsUnreachable(t *testing.T) {
	e := newEnv(t)
	e.extra = []string{"DEMIURGE_E2E_CANARY=" + hostCanary, "OPENAI_API_KEY=sk-e2e-sandbox-must-not-leak-0123456789"}
	out := e.scripted("all", terminalCalls(
		`cat /proc/$PPID/environ | tr '\0' '\n'`,
		`cat /proc/*/environ 2>/dev/null | tr '\0' '\n'; ls /proc | grep -E '^[0-9]+$' | wc -l`,
		`cat /proc/1/cmdline /proc/1/environ 2>&1 | tr '\0' ' '; ls -l /proc/1/exe 2>&1; cat /proc/1/maps 2>&1 | head -3`,
		`env; ps -eo pid,args 2>&1 | head -20`,
	))
	for _, c := range out.ToolCalls {
		if c.Status != "succeeded" && c.Status != "failed" {
			t.Fatalf("%s: %+v", c.Name, c)
		}
		for _, leak := range []string{hostCanary, "DEMIURGE_E2E_CANARY", "sk-e2e-sandbox", "OPENAI_API_KEY", "DEMIURGE_HOME"} {
			if strings.Contains(c.Content, leak) {
				t.Fatalf("a command saw the Host's %s:\n%s", leak, c.Content)
			}
		}
	}
	assertNotInHome(t, e.home, hostCanary)
	assertNotInHome(t, e.home+".private", hostCanary)
}

func TestSandboxRuntimeHomeIsHidden(t *testing.T) {
	e := newEnv(t)
	e.run("", "init")
	agent := filepath.Join(e.home, "agents", "assistant", "agent.yaml")
	before, err := os.ReadFile(agent)
	if err != nil {
		t.Fatal(err)
	}
	out := e.scripted("all", terminalCalls(
		"ls -A "+e.home+" 2>&1; cat "+e.home+"/config.yaml 2>&1; head -c 64 "+e.home+"/runtime/runtime.sqlite3 2>&1",
		"ls -A "+e.home+"/agents "+e.home+"/runtime "+e.home+"/logs 2>&1; cat "+e.home+"/runtime/host.key 2>&1",
		// The self-grant attack: edit the live core and save it with the
		// Host's own binary.
		"echo 'capabilities: {defaults: {terminal.exec: {}}}' >> "+agent+"; "+demiurgeBinary(t)+" --home "+e.home+" core save 2>&1; echo exit=$?",
		"ls -A ~/.. 2>&1; ls -A "+e.home+".private 2>&1",
	))
	for _, c := range out.ToolCalls {
		// What a listing or a read of the home would print: its config,
		// the database header, the runtime and agents entries, the key.
		for _, leak := range []string{"default_core", "SQLite format", "core.git", "host.log", "evolver"} {
			if strings.Contains(c.Content, leak) {
				t.Fatalf("the runtime home is visible (%s):\n%s", leak, c.Content)
			}
		}
	}
	after, err := os.ReadFile(agent)
	if err != nil || string(after) != string(before) {
		t.Fatalf("agent.yaml changed from a command:\n%s", after)
	}
	if r := e.run("", "core", "status", "--json"); strings.Contains(r.stdout, "agent.yaml") {
		t.Fatalf("core status shows an edit: %s", r.stdout)
	}
}

func TestSandboxWritesOutsideTheWorkspaceFail(t *testing.T) {
	e := newEnv(t)
	victim := filepath.Join(filepath.Dir(e.workspace), "victim")
	if err := os.MkdirAll(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(victim, "keep.txt"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, approve := range []string{"deny", "all"} {
		out := e.scripted(approve, terminalCalls(
			"touch ../x",
			"rm -rf ../victim",
			"rm -rf ~/..",
			"chmod 000 ../victim/keep.txt",
			"cp ../victim/keep.txt ../victim/copy.txt",
			"echo ok > inside.txt && cat inside.txt",
		))
		for i, c := range out.ToolCalls[:5] {
			if c.Status == "succeeded" {
				t.Fatalf("--approve %s: call %d succeeded: %+v", approve, i, c)
			}
		}
		if approve == "all" {
			if c := out.ToolCalls[5]; c.Status != "succeeded" || !strings.Contains(c.Content, "ok") {
				t.Fatalf("a workspace write failed: %+v", c)
			}
			if c := out.ToolCalls[0]; !strings.Contains(c.Content, "Read-only file system") && !strings.Contains(c.Content, "denied") {
				t.Fatalf("touch ../x: want a permission error, got %+v", c)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(e.workspace), "x")); err == nil {
		t.Fatal("../x was created")
	}
	info, err := os.Stat(filepath.Join(victim, "keep.txt"))
	if err != nil || info.Mode().Perm() != 0o644 {
		t.Fatalf("the victim changed: %v %v", info, err)
	}
	if _, err := os.Stat(filepath.Join(victim, "copy.txt")); err == nil {
		t.Fatal("a copy was written outside the workspace")
	}
}

func TestSandboxCredentialsOfTheUserAreHidden(t *testing.T) {
	e := newEnv(t)
	user := filepath.Join(filepath.Dir(e.home), "user")
	for _, f := range []string{".ssh/id_rsa", ".aws/credentials", ".config/gh/hosts.yml", ".netrc"} {
		p := filepath.Join(user, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("credential-"+filepath.Base(f)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e.extra = []string{"HOME=" + user}
	// A wildcard defeats the guard's path reading; the sandbox still
	// hides the files.
	out := e.scripted("all", terminalCalls("cat "+user+"/.ss?/id_rsa "+user+"/.aw?/credentials "+user+"/.confi?/gh/hosts.yml "+user+"/.netr? 2>&1"))
	if c := out.ToolCalls[0]; strings.Contains(c.Content, "credential-") {
		t.Fatalf("a credential is readable:\n%s", c.Content)
	}
}

// pgrepMarker lists processes whose command line holds marker.
func pgrepMarker(marker string) string {
	out, _ := exec.Command("pgrep", "-af", marker).Output()
	return strings.TrimSpace(string(out))
}

func waitGone(t *testing.T, marker string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		left := pgrepMarker(marker)
		if left == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes survived:\n%s", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSandboxNoDescendantSurvivesTimeout(t *testing.T) {
	e := newEnv(t)
	marker := "e2e-timeout-daemon-" + strconv.Itoa(os.Getpid())
	cmd := `(setsid bash -c 'exec -a ` + marker + ` sleep 300' </dev/null >/dev/null 2>&1 &); ` +
		`(env -i bash -c '(exec -a ` + marker + ` sleep 301 &)' </dev/null >/dev/null 2>&1); ` +
		`nohup bash -c 'exec -a ` + marker + ` sleep 302' >/dev/null 2>&1 & sleep 100`
	b, _ := json.Marshal([]map[string]any{{"name": "terminal", "arguments": map[string]any{"command": cmd, "timeout_seconds": 1}}})
	out := e.scripted("all", string(b))
	if c := out.ToolCalls[0]; !strings.Contains(c.Content, "timed_out: true") {
		t.Fatalf("not timed out: %+v", c)
	}
	waitGone(t, marker, time.Second)
}

func TestSandboxNoDescendantSurvivesHostKill(t *testing.T) {
	e := newEnv(t)
	marker := "e2e-hostkill-daemon-" + strconv.Itoa(os.Getpid())
	cmd := `(setsid bash -c 'exec -a ` + marker + ` sleep 300' </dev/null >/dev/null 2>&1 &); ` +
		`(env -i bash -c '(exec -a ` + marker + ` sleep 301 &)' </dev/null >/dev/null 2>&1); exec -a ` + marker + ` sleep 100`
	b, _ := json.Marshal([]map[string]any{{"name": "terminal", "arguments": map[string]any{"command": cmd, "timeout_seconds": 60}}})
	script := e.writeFile("hostkill.json", `[{"tool_calls":`+string(b)+`},{"content":"done"}]`)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := e.cmd(ctx, "", "run", "--approve", "all", "--fake-script", script, "go")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(pgrepMarker(marker), "\n") < 2 {
		if time.Now().After(deadline) {
			_ = c.Process.Kill()
			_ = c.Wait()
			t.Fatalf("the command did not start its daemons: %q", pgrepMarker(marker))
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = c.Process.Signal(syscall.SIGKILL)
	_ = c.Wait()
	waitGone(t, marker, 2*time.Second)
	// The next Host open finds nothing left and reconciles the turn.
	if r := e.run("", "doctor", "--json"); !sandboxWorking(t, r.stdout) {
		t.Fatalf("doctor after the kill: %s", r.stdout)
	}
	if left := pgrepMarker(marker); left != "" {
		t.Fatalf("processes survived the next open:\n%s", left)
	}
}

func TestSandboxNetworkOffMeansNoConnection(t *testing.T) {
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
			_, _ = c.Write([]byte("hello-from-loopback\n"))
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	probe := "exec 3<>/dev/tcp/127.0.0.1/" + port + " && head -1 <&3"
	e := newEnv(t)
	out := e.scripted("all", terminalCalls(probe))
	if c := out.ToolCalls[0]; !strings.Contains(c.Content, "hello-from-loopback") {
		t.Fatalf("network on: %+v", c)
	}
	writeConfig(t, e, "sandbox:\n  mode: workspace-write\n  network: \"off\"\n")
	out = e.scripted("all", terminalCalls(probe, "getent hosts localhost example.com; echo rc=$?"))
	if c := out.ToolCalls[0]; strings.Contains(c.Content, "hello-from-loopback") || c.Status == "succeeded" {
		t.Fatalf("network off reached loopback: %+v", c)
	}
}

// sandboxWorking reads doctor --json's sandbox state.
func sandboxWorking(t *testing.T, doctorJSON string) bool {
	t.Helper()
	var rep struct {
		Sandbox struct {
			Working bool     `json:"working"`
			Missing []string `json:"missing"`
		} `json:"sandbox"`
	}
	if err := json.Unmarshal([]byte(doctorJSON), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, doctorJSON)
	}
	return rep.Sandbox.Working && len(rep.Sandbox.Missing) == 0
}

func writeConfig(t *testing.T, e *env, body string) {
	t.Helper()
	e.run("", "init")
	if err := os.WriteFile(filepath.Join(e.home, "config.yaml"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestSandboxMissingFeatureRefusesAndDoctorSaysSo(t *testing.T) {
	e := newEnv(t)
	if r := e.run("", "doctor", "--json"); r.code != 0 || !sandboxWorking(t, r.stdout) {
		t.Fatalf("doctor on this kernel: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	e.extra = []string{"DEMIURGE_SANDBOX_SIMULATE_MISSING=Landlock ABI 3 or newer"}
	out := e.scripted("all", terminalCalls("ls", "touch ran.txt"))
	for _, c := range out.ToolCalls {
		if c.Status == "succeeded" || c.ExecutionStarted || !strings.Contains(c.Content, "Landlock ABI 3 or newer") {
			t.Fatalf("a command ran without its sandbox: %+v", c)
		}
	}
	if _, err := os.Stat(filepath.Join(e.workspace, "ran.txt")); err == nil {
		t.Fatal("a command ran without its sandbox")
	}
	r := e.run("", "doctor")
	if r.code != 1 || !strings.Contains(r.stdout, "sandbox.missing_feature") || !strings.Contains(r.stdout, "Landlock") {
		t.Fatalf("doctor with a missing feature: exit %d\n%s", r.code, r.stdout)
	}
	// The operator may turn the sandbox off; then commands run again.
	writeConfig(t, e, "sandbox: {mode: \"off\"}\n")
	out = e.scripted("all", terminalCalls("echo unconfined"))
	if c := out.ToolCalls[0]; c.Status != "succeeded" {
		t.Fatalf("sandbox off: %+v", c)
	}
}

func TestSafeCommandsRunWithoutApproval(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.workspace, "notes.txt"), []byte("a needle here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("git"); err == nil {
		init := exec.Command("git", "init", "-q", e.workspace)
		if err := init.Run(); err != nil {
			t.Fatal(err)
		}
	}
	cmds := []string{"ls", "printf hello", "git status --short"}
	if _, err := exec.LookPath("rg"); err == nil {
		cmds = append(cmds, "rg needle . | head -20")
	} else {
		cmds = append(cmds, "grep -r needle . | head -20")
	}
	out := e.scripted("deny", terminalCalls(cmds...))
	for i, c := range out.ToolCalls {
		if c.Status != "succeeded" {
			t.Fatalf("%q under --approve deny: %+v", cmds[i], c)
		}
	}
	if !strings.Contains(out.ToolCalls[0].Content, "notes.txt") || !strings.Contains(out.ToolCalls[3].Content, "needle") {
		t.Fatalf("outputs: %+v", out.ToolCalls)
	}
}

func TestGuardBypassesStayBlocked(t *testing.T) {
	e := newEnv(t)
	bypasses := []string{
		`printf -v 'a[$(touch pwned1)]' 1`,
		`read 'a[$(touch pwned2)]' <<< x`,
		`declare -a 'b[$(touch pwned3)]=1'`,
		`printf -v 'a[$(rm -rf ~)]' 1`,
		`cat .git/config`,
		`cat id_rsa`,
		`cat server.key`,
		`git show HEAD:.env`,
		`sed -n --i d notes.txt`,
	}
	// The files exist, so a command that wrongly ran would succeed.
	for name, body := range map[string]string{"notes.txt": "keep\n", "id_rsa": "key", "server.key": "key", ".git/config": "[core]\n"} {
		p := filepath.Join(e.workspace, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, approve := range []string{"deny"} {
		out := e.scripted(approve, terminalCalls(bypasses...))
		for i, c := range out.ToolCalls {
			if c.Status == "succeeded" {
				t.Fatalf("--approve %s: %q ran: %+v", approve, bypasses[i], c)
			}
		}
	}
	// Under --approve all a block still holds.
	out := e.scripted("all", terminalCalls(`printf -v 'a[$(rm -rf ~)]' 1`))
	if c := out.ToolCalls[0]; c.ExecutionStarted || !strings.Contains(c.Content, "blocked") {
		t.Fatalf("a blocked payload ran under --approve all: %+v", c)
	}
	for _, f := range []string{"pwned1", "pwned2", "pwned3"} {
		if _, err := os.Stat(filepath.Join(e.workspace, f)); err == nil {
			t.Fatalf("%s was created under --approve deny", f)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(e.workspace, "notes.txt")); string(b) != "keep\n" {
		t.Fatalf("sed --i edited the file: %q", b)
	}
}

func TestSessionGrantCoversOnlyWhatWasShown(t *testing.T) {
	e := newEnv(t)
	victim := filepath.Join(filepath.Dir(e.workspace), "victim")
	if err := os.MkdirAll(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.workspace, "build.log"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := e.writeFile("grant.json", `[{"tool_calls":`+terminalCalls("rm build.log", "rm -rf ../victim")+`},{"content":"done"}]`)
	// One answer only: "allow for this session" for the first question;
	// the second question, if asked, meets end of input (a denial).
	r := e.run("2\n", "run", "--json", "--approve", "ask", "--fake-script", script, "go")
	var out runOut
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	if c := out.ToolCalls[0]; c.Status != "succeeded" {
		t.Fatalf("rm build.log: %+v\n%s", c, r.stderr)
	}
	if c := out.ToolCalls[1]; c.Status == "succeeded" || c.ExecutionStarted {
		t.Fatalf("the session grant covered rm -rf ../victim: %+v", c)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatal("the victim was removed")
	}
	sc := bufio.NewScanner(strings.NewReader(r.stderr))
	asked := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "Approval needed:") {
			asked++
		}
	}
	if asked != 2 || !strings.Contains(r.stderr, "runs sandboxed") || !strings.Contains(r.stderr, "covers") {
		t.Fatalf("want two questions naming the sandbox and what a grant covers:\n%s", r.stderr)
	}
}

// A hostile repository names programs in its config; a safe git command
// must not run them, approved or not.
func TestHostileRepositoryProgramsDoNotRun(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	e := newEnv(t)
	marker := filepath.Join(e.workspace, "hook-ran")
	hook := filepath.Join(e.workspace, "hook.sh")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho ran >> "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"config", "core.fsmonitor", hook}, {"config", "core.pager", hook}} {
		c := exec.Command("git", args...)
		c.Dir = e.workspace
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	for _, approve := range []string{"deny", "all"} {
		out := e.scripted(approve, terminalCalls("git status --short", "git diff", "git log -1"))
		if c := out.ToolCalls[0]; c.Status != "succeeded" {
			t.Fatalf("--approve %s: git status: %+v", approve, c)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("--approve %s: the repository's program ran", approve)
		}
	}
	// A driver the environment cannot switch off makes git ask.
	attrs := filepath.Join(e.workspace, ".gitattributes")
	if err := os.WriteFile(attrs, []byte("*.txt diff=evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := exec.Command("git", "config", "diff.evil.textconv", hook)
	c.Dir = e.workspace
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	out := e.scripted("deny", terminalCalls("git diff"))
	if c := out.ToolCalls[0]; c.Status != "denied" || c.ExecutionStarted {
		t.Fatalf("git diff with a textconv driver under deny: %+v", c)
	}
}

// A workspace that is the runtime home itself still keeps the home's
// configuration, database, cores and logs hidden.
func TestSandboxWorkspaceAtTheHomeKeepsItsSecretsHidden(t *testing.T) {
	e := newEnv(t)
	e.run("", "init")
	e.workspace = e.home
	out := e.scripted("all", terminalCalls("ls -A; cat config.yaml; ls -A runtime agents logs; head -c 64 runtime/runtime.sqlite3"))
	c := out.ToolCalls[0]
	for _, leak := range []string{"default_core", "SQLite format", "core.git", "evolver", "host.log"} {
		if strings.Contains(c.Content, leak) {
			t.Fatalf("the home's %s is visible:\n%s", leak, c.Content)
		}
	}
	if !strings.Contains(c.Content, "workspace") {
		t.Fatalf("the home's other entries should be listed:\n%s", c.Content)
	}
}
