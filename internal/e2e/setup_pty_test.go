//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/internal/envfile"
)

// The wizard on a real terminal: add a provider with its key typed
// without echo, make it the default, set the core's model, set the
// timezone, exit. The key lands in .env (0600) and nowhere on the screen.
func TestSetupWizardOnATerminal(t *testing.T) {
	e := newEnv(t)
	const key = "sk-typed-in-the-wizard-7777"
	p := startPTY(t, e, "setup")
	p.expect("Runtime home: " + e.home)
	p.expect("Choose 1-6 [1]: ")
	p.typeLine("2")
	p.expect("11) Custom")
	p.expect("Choose 1-11 [1]: ")
	p.typeLine("1")
	p.expect("(input hidden): ")
	p.typeLine(key)
	p.expect("Use openai as default provider? (y/n) [y]: ")
	p.typeLine("")
	p.expect("saved provider profile openai")
	p.expect("Core id [assistant]: ")
	p.typeLine("")
	p.expect("Model [gpt-5.5]: ")
	p.typeLine("")
	p.expect("updated assistant model (openai gpt-5.5")
	p.expect("Choose 1-6 [1]: ")
	p.typeLine("5")
	p.expect("empty clears it): ")
	p.typeLine("Europe/Paris")
	p.expect("timezone: Europe/Paris (config.yaml:runtime.timezone)")
	p.expect("Choose 1-6 [1]: ")
	p.typeLine("6")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	p.mu.Lock()
	screen := p.out.String()
	p.mu.Unlock()
	if strings.Contains(screen, key) {
		t.Fatalf("the key was echoed:\n%s", screen)
	}
	envPath := filepath.Join(e.home, ".env")
	f, err := envfile.Load(envPath)
	if err != nil || f.Values["OPENAI_API_KEY"] != key {
		t.Fatalf(".env: %+v, %v", f, err)
	}
	cfg, _ := os.ReadFile(filepath.Join(e.home, "config.yaml"))
	if !strings.Contains(string(cfg), "default: openai") || !strings.Contains(string(cfg), "timezone: Europe/Paris") || strings.Contains(string(cfg), key) {
		t.Fatalf("config.yaml:\n%s", cfg)
	}
	y, _ := os.ReadFile(filepath.Join(e.home, "agents", "assistant", "agent.yaml"))
	if !strings.Contains(string(y), "provider: openai") || !strings.Contains(string(y), "model_name: gpt-5.5") {
		t.Fatalf("agent.yaml:\n%s", y)
	}
}

// Ctrl-C at a question cancels the wizard: "Canceled.", nothing written.
func TestSetupWizardCtrlC(t *testing.T) {
	e := newEnv(t)
	p := startPTY(t, e, "setup")
	p.expect("Choose 1-6 [1]: ")
	p.typeLine("2")
	p.expect("Choose 1-11 [1]: ")
	// Ctrl-C on the terminal: the line discipline sends SIGINT.
	if _, err := p.master.Write([]byte{0x03}); err != nil {
		t.Fatal(err)
	}
	p.expect("Canceled.")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(e.home, ".env")); !os.IsNotExist(err) {
		t.Fatalf(".env written by a canceled wizard: %v", err)
	}
}
