package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/sandbox"
)

func TestSandboxConfig(t *testing.T) {
	for _, tt := range []struct {
		yaml    string
		want    sandbox.Settings
		wantErr string
	}{
		{"", sandbox.Settings{Mode: sandbox.ModeWorkspaceWrite}, ""},
		{"sandbox: {mode: workspace-write, network: \"on\"}\n", sandbox.Settings{Mode: sandbox.ModeWorkspaceWrite}, ""},
		{"sandbox: {network: \"off\"}\n", sandbox.Settings{Mode: sandbox.ModeWorkspaceWrite, NoNetwork: true}, ""},
		{"sandbox: {network: off}\n", sandbox.Settings{Mode: sandbox.ModeWorkspaceWrite, NoNetwork: true}, ""},
		{"sandbox: {network: false}\n", sandbox.Settings{Mode: sandbox.ModeWorkspaceWrite, NoNetwork: true}, ""},
		{"sandbox: {mode: \"off\"}\n", sandbox.Settings{Mode: sandbox.ModeOff}, ""},
		{"sandbox: {mode: read-only}\n", sandbox.Settings{}, `sandbox.mode must be workspace-write or off, got "read-only"`},
		{"sandbox: {network: maybe}\n", sandbox.Settings{}, `sandbox.network must be on or off, got "maybe"`},
		{"sandbox: {network: 3}\n", sandbox.Settings{}, `sandbox.network must be on or off, got "3"`},
		{"sandbox: {allow: everything}\n", sandbox.Settings{}, "allow"},
	} {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte("runtime: {default_core: assistant}\n"+tt.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadConfig(path)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), path) {
				t.Errorf("%q: err %v, want %q naming the file", tt.yaml, err, tt.wantErr)
			}
			continue
		}
		if err != nil || cfg.Sandbox.Settings() != tt.want {
			t.Errorf("%q: %+v %v, want %+v", tt.yaml, cfg.Sandbox.Settings(), err, tt.want)
		}
	}
	// The default config written by init names the section and loads.
	cfg, err := LoadConfig(filepath.Join(t.TempDir(), "missing.yaml"))
	if err != nil || !cfg.Sandbox.Settings().Enabled() || !strings.Contains(defaultConfigYAML, "sandbox:") {
		t.Fatalf("default: %+v %v", cfg.Sandbox, err)
	}
}
