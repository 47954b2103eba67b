//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// asLimitEnv makes the test binary a wrapper: it limits its own address space
// to the given bytes and execs the demiurge binary named by asTargetEnv with
// its arguments, so the Host runs under RLIMIT_AS from its first instruction.
const (
	asLimitEnv  = "E2E_EXEC_AS_LIMIT"
	asTargetEnv = "E2E_EXEC_TARGET"
)

func init() {
	limit, target := os.Getenv(asLimitEnv), os.Getenv(asTargetEnv)
	if limit == "" || target == "" {
		return
	}
	if err := execUnderAS(limit, target); err != nil {
		os.Stderr.WriteString("address-space wrapper: " + err.Error() + "\n")
	}
	os.Exit(125)
}

// execUnderAS execs target with this process's arguments under RLIMIT_AS
// limit. Everything the exec needs is allocated before the limit is set:
// the limit may already be below what this process has mapped, and then
// the heap could not grow for one more allocation.
func execUnderAS(limit, target string) error {
	n, err := strconv.ParseUint(limit, 10, 64)
	if err != nil {
		return err
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, asLimitEnv+"=") && !strings.HasPrefix(kv, asTargetEnv+"=") {
			env = append(env, kv)
		}
	}
	path, err := syscall.BytePtrFromString(target)
	if err != nil {
		return err
	}
	argv, err := syscall.SlicePtrFromStrings(append([]string{target}, os.Args[1:]...))
	if err != nil {
		return err
	}
	envv, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return err
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
		return err
	}
	_, _, errno := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(path)),
		uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])))
	return errno
}

// hostAddressSpace is the Host's RLIMIT_AS in these tests: a normal turn fits
// (the interpreter then boxes its small ints instead of reserving 4 GiB), and
// one unbounded authored allocation of [0] * 200000000 (3 GiB) would not.
const hostAddressSpace = 2 << 30

// runUnderAS runs `demiurge args...` with RLIMIT_AS set and GOMEMLIMIT unset,
// and returns the result and the Host's peak resident set in bytes.
func (e *env) runUnderAS(args ...string) (result, int64) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, os.Args[0], args...)
	for _, kv := range e.environ() {
		if !strings.HasPrefix(kv, "GOMEMLIMIT=") && !strings.HasPrefix(kv, "GOGC=") {
			c.Env = append(c.Env, kv)
		}
	}
	c.Env = append(c.Env, asLimitEnv+"="+strconv.Itoa(hostAddressSpace), asTargetEnv+"="+demiurgeBinary(e.t))
	c.Dir = e.workspace
	r := e.wait(c)
	var peak int64
	if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
		peak = ru.Maxrss << 10 // KiB on Linux
	}
	return r, peak
}

// hogModule is the shipped echo tool, made to allocate without limit when
// asked to "hog" (or to allocate size bytes once when asked for "alloc").
const hogModule = `def execute(ctx, args):
    if args["text"] == "hog":
        return len([0] * 200000000)
    if args["text"] == "alloc":
        return len("x" * (100 << 20))
    return args["text"]
`

func hogScript(e *env, name, text string) string {
	script := []map[string]any{
		{"tool_calls": []map[string]any{{"id": "h1", "name": "echo", "arguments": map[string]any{"text": text}}}},
		{"tool_calls": []map[string]any{{"id": "e1", "name": "echo", "arguments": map[string]any{"text": "still here"}}}},
		{"content": "done"},
	}
	b, err := json.Marshal(script)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.writeFile(name, string(b))
}

// An authored tool that allocates without limit fails with the budget error;
// the Host stays up under a 2 GiB address space and the turn goes on.
func TestAuthoredToolMemoryBudget(t *testing.T) {
	e := newEnv(t)
	e.writeCoreFile("agent/tools/echo/module.star", hogModule)

	r, peak := e.runUnderAS("run", "--json", "--fake-script", hogScript(e, "hog.json", "hog"), "use echo")
	out := e.runOutOf(r, nil)
	if r.code != 0 || out.Outcome != "completed" || out.Text != "done" || len(out.ToolCalls) != 2 {
		t.Fatalf("exit %d %+v\n%s", r.code, out, r.stderr)
	}
	hog, next := out.ToolCalls[0], out.ToolCalls[1]
	want := "agent/tools/echo/module.star:3: authored code exceeded its memory budget of 256 MiB"
	if !hog.IsError || !hog.ExecutionStarted || !strings.Contains(hog.Content, want) {
		t.Fatalf("hog call %+v, want a failed result with %q", hog, want)
	}
	if next.IsError || next.Content != "still here" {
		t.Fatalf("the call after the failed one: %+v", next)
	}
	t.Logf("Host peak RSS %d MiB", peak>>20)
	if peak > 1<<30 {
		t.Fatalf("Host peak RSS %d MiB, want it bounded by the budget (under 1 GiB)", peak>>20)
	}

	// The operator's budget: 100 MiB at once passes the default and fails 64 MiB.
	r, _ = e.runUnderAS("run", "--json", "--fake-script", hogScript(e, "alloc.json", "alloc"), "use echo")
	if out = e.runOutOf(r, nil); r.code != 0 || out.ToolCalls[0].IsError || out.ToolCalls[0].Content != strconv.Itoa(100<<20) {
		t.Fatalf("100 MiB under the default budget: exit %d %+v %s", r.code, out, r.stderr)
	}
	config := "limits: {authored_memory_mb_per_call: 64}\n"
	if err := os.WriteFile(e.home+"/config.yaml", []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	r, _ = e.runUnderAS("run", "--json", "--fake-script", hogScript(e, "alloc64.json", "alloc"), "use echo")
	if out = e.runOutOf(r, nil); r.code != 0 || out.Outcome != "completed" {
		t.Fatalf("exit %d %+v %s", r.code, out, r.stderr)
	}
	if c := out.ToolCalls[0]; !c.IsError || !strings.Contains(c.Content, "module.star:5: authored code exceeded its memory budget of 64 MiB") {
		t.Fatalf("alloc call under 64 MiB: %+v", c)
	}

	if err := os.WriteFile(e.home+"/config.yaml", []byte("limits: {authored_memory_mb_per_call: -1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = e.run("", "run", "--json", "hi")
	if r.code != 2 || !strings.Contains(r.stdout+r.stderr, "limits.authored_memory_mb_per_call must be between 1 and 1048576 MiB") {
		t.Fatalf("a negative budget: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
}

// A slot that allocates without limit is a failed slot, handled as every slot
// failure: a hard slot fails the turn with the budget error (the Host exits as
// for any failed turn), a soft slot is skipped and the turn completes.
func TestAuthoredSlotMemoryBudget(t *testing.T) {
	e := newEnv(t)
	e.writeCoreFile("agent/input/base_input/module.star", "def process(ctx):\n    x = [0] * 200000000\n")
	out, r := e.runUnderASJSON("hi")
	want := "module.star:2: authored code exceeded its memory budget of 256 MiB"
	if r.code != 1 || out.Outcome != "failed" || out.Error == nil || !strings.Contains(out.Error.Message, want) {
		t.Fatalf("hard slot: exit %d %+v, want the turn failed with %q\n%s", r.code, out, want, r.stderr)
	}

	e.writeCoreFile("agent/input/base_input/module.star", "def process(ctx):\n    ctx.input.add_context(ctx.input.raw_text, role = \"user\")\n")
	e.writeCoreFile("agent/bootstrap/session_context/module.star", "def process(ctx):\n    x = \"x\" * (1 << 31)\n")
	out, r = e.runUnderASJSON("hi")
	if r.code != 0 || out.Outcome != "completed" || out.Text != "[fake] hi" {
		t.Fatalf("soft slot: exit %d %+v %s", r.code, out, r.stderr)
	}
}

func (e *env) runUnderASJSON(args ...string) (runOut, result) {
	e.t.Helper()
	r, _ := e.runUnderAS(append([]string{"run", "--json"}, args...)...)
	return e.runOutOf(r, args), r
}
