//go:build linux

package tuibench_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge/cmd/bench/internal/tuibench"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// demiurgeBinary builds the demiurge binary once per test binary.
func demiurgeBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and runs the terminal UI")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tuibench-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "demiurge")
		build := exec.Command("go", "build", "-o", binary, "github.com/demiurge/demiurge/cmd/demiurge")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build demiurge: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binary != "" {
		os.RemoveAll(filepath.Dir(binary))
	}
	os.Exit(code)
}

// childEnv is the test's environment without the variables that would
// pick another home, script or a real provider.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "DEMIURGE_") && !strings.HasPrefix(name, "OPENAI_") && !strings.HasPrefix(name, "ANTHROPIC_") {
			env = append(env, kv)
		}
	}
	return env
}

// The keystroke measurement times every key it was asked for, each a
// positive duration, and reads a plausible idle CPU share; the targets are
// the driver's to judge.
func TestMeasureKeystrokes(t *testing.T) {
	bin := demiurgeBinary(t)
	k, err := tuibench.MeasureKeystrokes(context.Background(), bin, childEnv(), t.TempDir(), 8, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(k.Samples) != 8 {
		t.Fatalf("%d samples, want 8", len(k.Samples))
	}
	for i, d := range k.Samples {
		if d <= 0 || d > time.Minute {
			t.Fatalf("sample %d is %s", i, d)
		}
	}
	if k.IdleCPU < 0 || k.IdleCPU > 100 || k.Idle != time.Second {
		t.Fatalf("idle CPU %.2f %% over %s", k.IdleCPU, k.Idle)
	}
	t.Logf("keystrokes %v, idle CPU %.2f %%", k.Samples, k.IdleCPU)
}

// The session is seeded with at least the messages asked for, and the UI
// opens it and shows its newest message before the memory is read.
func TestMeasureSessionRSS(t *testing.T) {
	bin := demiurgeBinary(t)
	m, err := tuibench.MeasureSessionRSS(context.Background(), bin, childEnv(), t.TempDir(), 300)
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS <= 1 || m.HWM < m.RSS || m.Messages != 300 {
		t.Fatalf("memory %+v", m)
	}
	t.Logf("VmRSS %.1f MiB, VmHWM %.1f MiB", m.RSS, m.HWM)
}
