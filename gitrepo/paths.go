package gitrepo

import "path/filepath"

// Paths locates one repository: the bare git directory, its live checkout
// and its mutation lock. Every path is absolute or relative to the
// process's working directory.
type Paths struct {
	Checkout string // the live checkout (<home>/agents)
	GitDir   string // the bare repository (<home>/runtime/core.git)
	Lock     string // the mutation lock file (<home>/runtime/core.lock)
}

// stateDir holds the storage's own files inside the bare repository: the
// checkout head, the stat index of the live checkout and the transaction
// journal. Git ignores unknown files in the git directory.
func (p Paths) stateDir() string     { return filepath.Join(p.GitDir, "demiurge") }
func (p Paths) checkoutHead() string { return filepath.Join(p.stateDir(), "checkout") }
func (p Paths) liveIndex() string    { return filepath.Join(p.stateDir(), "live.index") }
func (p Paths) journal() string      { return filepath.Join(p.stateDir(), "txn.json") }
