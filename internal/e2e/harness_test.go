package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge/internal/cli"
	"github.com/demiurge/demiurge/internal/demiurgetest"
)

// buildDir holds the binaries the process-level tests build.
var buildDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "demiurge-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// demiurgeBinary builds the demiurge binary once per test binary, for the
// tests that need the Host as a process of its own.
func demiurgeBinary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		binaryPath = filepath.Join(buildDir, "demiurge")
		build := exec.Command("go", "build", "-o", binaryPath, "../../cmd/demiurge")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			binaryErr = fmt.Errorf("build demiurge: %v\n%s", err, out)
		}
	})
	if binaryErr != nil {
		t.Fatal(binaryErr)
	}
	return binaryPath
}

// env is one isolated runtime home and workspace.
type env struct {
	t         *testing.T
	home      string
	workspace string
	extra     []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{t: t, home: filepath.Join(root, "home"), workspace: filepath.Join(root, "ws")}
	if err := os.MkdirAll(e.workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) environ() []string {
	var base []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "DEMIURGE_"), strings.HasPrefix(name, "OPENAI_"), strings.HasPrefix(name, "ANTHROPIC_"):
			continue
		}
		base = append(base, kv)
	}
	base = append(base, "DEMIURGE_HOME="+e.home, "DEMIURGE_WORKSPACE="+e.workspace)
	return append(base, e.extra...)
}

type result struct {
	code   int
	stdout string
	stderr string
}

// inProcess serialises the in-process invocations: each one owns the
// process's environment and working directory while it runs, as a
// process of its own would.
var inProcess sync.Mutex

// run executes one command line in process through cli.Run, in the
// environment and working directory a binary started by cmd would have,
// and waits (at most 60 s).
func (e *env) run(stdin string, args ...string) result {
	e.t.Helper()
	inProcess.Lock()
	defer inProcess.Unlock()
	restore := e.enter()
	defer restore()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errb demiurgetest.Buffer
	code := cli.Run(ctx, args, strings.NewReader(stdin), &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// enter makes the process's environment environ() and its working
// directory the workspace; the returned function restores both.
func (e *env) enter() (restore func()) {
	e.t.Helper()
	saved := os.Environ()
	wd, err := os.Getwd()
	if err != nil {
		e.t.Fatal(err)
	}
	setEnviron(e.environ())
	if err := os.Chdir(e.workspace); err != nil {
		setEnviron(saved)
		e.t.Fatal(err)
	}
	return func() {
		if err := os.Chdir(wd); err != nil {
			e.t.Error(err)
		}
		setEnviron(saved)
	}
}

func setEnviron(kvs []string) {
	os.Clearenv()
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
}

// cmd is the demiurge binary as a process of its own, for the tests that
// need one (signals, a SIGKILLed Host, several Hosts at once, resource
// limits, a terminal).
func (e *env) cmd(ctx context.Context, stdin string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, demiurgeBinary(e.t), args...)
	c.Env = e.environ()
	c.Dir = e.workspace
	c.Stdin = strings.NewReader(stdin)
	return c
}

// exec runs the binary as a process of its own and waits (at most 60 s).
func (e *env) exec(stdin string, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return e.wait(e.cmd(ctx, stdin, args...))
}

// wait runs c to its end and collects its output and exit code.
func (e *env) wait(c *exec.Cmd) result {
	e.t.Helper()
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			e.t.Fatalf("run %v: %v", c.Args, err)
		}
		code = ee.ExitCode()
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// runJSON runs `demiurge run --json ...` and decodes the object.
func (e *env) runJSON(args ...string) (runOut, result) {
	e.t.Helper()
	return e.runJSONStdin("", args...)
}

// runJSONStdin is runJSON with stdin.
func (e *env) runJSONStdin(stdin string, args ...string) (runOut, result) {
	e.t.Helper()
	r := e.run(stdin, append([]string{"run", "--json"}, args...)...)
	return e.runOutOf(r, args), r
}

// runOutOf decodes the stdout of `run --json args...`, failing the test if
// it is not a run's JSON.
func (e *env) runOutOf(r result, args []string) runOut {
	e.t.Helper()
	var out runOut
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		e.t.Fatalf("run --json %v: exit %d, stdout %q, stderr %q: %v", args, r.code, r.stdout, r.stderr, err)
	}
	return out
}

func (e *env) writeFile(name, content string) string {
	e.t.Helper()
	p := filepath.Join(filepath.Dir(e.home), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return p
}

type runOut struct {
	SessionID    string `json:"session_id"`
	TurnID       string `json:"turn_id"`
	CoreID       string `json:"core_id"`
	CoreRevision string `json:"core_revision"`
	Outcome      string `json:"outcome"`
	Text         string `json:"text"`
	Error        *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	ToolCalls []struct {
		CallID           string `json:"call_id"`
		Name             string `json:"name"`
		Status           string `json:"status"`
		IsError          bool   `json:"is_error"`
		ExecutionStarted bool   `json:"execution_started"`
		Content          string `json:"content"`
	} `json:"tool_calls"`
	Deliveries []struct {
		DeliveryID string `json:"delivery_id"`
		Status     string `json:"status"`
		Text       string `json:"text"`
	} `json:"deliveries"`
	Tasks []map[string]any `json:"tasks"`
}
