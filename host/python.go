package host

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"time"

	"github.com/demiurge/demiurge/pyworker"
	"github.com/demiurge/demiurge/sandbox"
)

// openPython builds the pool of Python workers (module.py slots and tools):
// the interpreter of runtime.python, run by the process manager inside the
// terminal sandbox, each worker with a private HOME under the private
// directory. No worker starts before a core calls one; Close kills them
// before the process manager closes.
func (h *Host) openPython(profile sandbox.Profile) error {
	h.python = pyworker.New(pyworker.Options{
		Python:      h.config.Runtime.Python,
		Processes:   h.processes,
		Sandbox:     profile,
		MemoryLimit: h.config.Limits.authoredMemoryLimit(),
		Logger:      h.logger,
		Scratch: func(key string) string {
			sum := sha256.Sum256([]byte(key))
			return filepath.Join(h.home.PrivateDir(), "python-home", hex.EncodeToString(sum[:8]))
		},
	})
	h.cores.python = h.python.Interpreter
	return h.closers.opened("python workers", 5*time.Second, h.python.Close)
}
