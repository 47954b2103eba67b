package host

import (
	"path/filepath"

	"github.com/demiurge/demiurge/sandbox"
)

// SimulateMissingEnv names a kernel feature the sandbox reports missing, so
// the refusal path can be exercised on a kernel that has everything. It
// can only make the Host refuse commands, never loosen the sandbox.
const SimulateMissingEnv = "DEMIURGE_SANDBOX_SIMULATE_MISSING"

// SandboxProfile is the sandbox of every agent process a Host on home
// starts: the operator's settings, with the runtime home and the root of
// the private homes hidden. The home's entries are named too: a workspace
// that is the home itself, or contains it, makes the home visible again,
// and these stay hidden inside it.
func SandboxProfile(home Home, cfg Config, getenv func(string) string) sandbox.Profile {
	p := sandbox.Profile{
		Settings: cfg.Sandbox.Settings(),
		Hidden: []string{
			home.Dir, home.PrivateDir(), home.ConfigPath(), filepath.Join(home.Dir, ".env"),
			home.RuntimeDir(), home.AgentsDir(), home.LogsDir(),
		},
	}
	if getenv != nil {
		p.SimulateMissing = getenv(SimulateMissingEnv)
	}
	return p
}
