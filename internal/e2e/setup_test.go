package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/envfile"
)

// The home's .env reaches the Host's memory only: a terminal command (a
// child of the Host) sees neither a key nor its name, while the provider
// profile the key belongs to reports it available.
func TestDotEnvNeverReachesATerminalCommand(t *testing.T) {
	e := newEnv(t)
	if r := e.exec("", "init"); r.code != 0 {
		t.Fatalf("init: %s", r.stderr)
	}
	const key, probe = "sk-dotenv-must-stay-private-4242", "probe-value-from-dotenv-9191"
	if err := os.WriteFile(filepath.Join(e.home, ".env"), []byte("OPENAI_API_KEY="+key+"\nDEMIURGE_PROBE_NOTE="+probe+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := e.writeFile("env-script.json", `[{"tool_calls":`+terminalCalls("env; echo probe=$DEMIURGE_PROBE_NOTE")+`},{"content":"done"}]`)
	r := e.exec("", "run", "--json", "--approve", "all", "--fake-script", script, "show the environment")
	if r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	out := e.runOutOf(r, nil)
	c := out.ToolCalls[0]
	if c.Status != "succeeded" || !strings.Contains(c.Content, "probe=") {
		t.Fatalf("terminal: %+v", c)
	}
	for _, leak := range []string{key, probe, "OPENAI_API_KEY", "DEMIURGE_PROBE_NOTE="} {
		if strings.Contains(c.Content, leak) {
			t.Fatalf("the command's environment shows %q:\n%s", leak, c.Content)
		}
	}
	ls := e.exec("", "setup", "providers", "list", "--json")
	var list struct {
		Providers map[string]struct {
			KeyAvailable bool   `json:"key_available"`
			Source       string `json:"api_key_source"`
		} `json:"providers"`
	}
	if err := json.Unmarshal([]byte(ls.stdout), &list); err != nil || !list.Providers["openai"].KeyAvailable || list.Providers["openai"].Source != "env:OPENAI_API_KEY (.env)" {
		t.Fatalf("providers list: %v %s", err, ls.stdout)
	}
	if strings.Contains(ls.stdout, key) {
		t.Fatal("providers list shows the key")
	}
	logs, _ := os.ReadFile(filepath.Join(e.home, "logs", "host.log"))
	if strings.Contains(string(logs), key) || strings.Contains(string(logs), probe) {
		t.Fatal("host.log holds a .env value")
	}
}

// setup killed at any moment leaves config.yaml and .env each either as
// they were or fully written: both always load, and .env holds one of the
// keys written.
func TestSetupKilledHalfwayLeavesWholeFiles(t *testing.T) {
	e := newEnv(t)
	if r := e.exec("", "init"); r.code != 0 {
		t.Fatalf("init: %s", r.stderr)
	}
	written := []string{""}
	for i := range 12 {
		k := fmt.Sprintf("sk-kill-%02d-%s", i, strings.Repeat("x", 4096))
		written = append(written, k)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c := e.cmd(ctx, "", "setup", "providers", "add", "openai", "--base-url", fmt.Sprintf("http://127.0.0.1:1/v%d", i), "--api-key", k, "--write-env", "--set-default")
		if err := c.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond)
		_ = c.Process.Signal(syscall.SIGKILL)
		_ = c.Wait()
		cancel()
		if _, err := host.LoadConfig(filepath.Join(e.home, "config.yaml")); err != nil {
			t.Fatalf("round %d: config.yaml does not load: %v", i, err)
		}
		f, err := envfile.Load(filepath.Join(e.home, ".env"))
		if err != nil {
			t.Fatalf("round %d: .env does not load: %v", i, err)
		}
		if v := f.Values["OPENAI_API_KEY"]; !slices.Contains(written, v) {
			t.Fatalf("round %d: .env holds a partial key (%d bytes)", i, len(v))
		}
	}
}
