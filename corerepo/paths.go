package corerepo

import (
	"path/filepath"

	"github.com/demiurge/demiurge/gitrepo"
)

// Paths locates the core repository of one runtime home. Every path is
// absolute or relative to the process's working directory; HomePaths gives
// the standard layout.
type Paths struct {
	Agents string // live checkout: <home>/agents
	GitDir string // bare repository: <home>/runtime/core.git
	Lock   string // mutation lock file: <home>/runtime/core.lock
	Evolve string // evolve run trees: <home>/runtime/evolve
	// HostKey is the Host secret key file: <home>/runtime/host.key (see
	// coregate.LoadHostKey). Options.HostKey, when set, is used instead.
	HostKey string
}

// HomePaths returns the standard layout of the runtime home dir.
func HomePaths(home string) Paths {
	return Paths{
		Agents:  filepath.Join(home, "agents"),
		GitDir:  filepath.Join(home, "runtime", "core.git"),
		Lock:    filepath.Join(home, "runtime", "core.lock"),
		Evolve:  filepath.Join(home, "runtime", "evolve"),
		HostKey: filepath.Join(home, "runtime", "host.key"),
	}
}

// storage is the layout of the git storage.
func (p Paths) storage() gitrepo.Paths {
	return gitrepo.Paths{Checkout: p.Agents, GitDir: p.GitDir, Lock: p.Lock}
}

func (p Paths) runDir(id string) string { return filepath.Join(p.Evolve, id) }
