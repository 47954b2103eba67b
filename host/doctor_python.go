package host

import (
	"context"
	"os"
	"path/filepath"

	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/pyworker"
)

// doctorPython resolves runtime.python and starts a worker the way a core's
// first module.py call does. Without an interpreter only cores with
// module.py slots or tools are affected, so it is a warning; a worker that
// does not start is one too (Starlark cores run regardless).
func doctorPython(ctx context.Context, h Home, cfg Config, getenv func(string) string, rep *DoctorReport) {
	scratch, err := os.MkdirTemp("", "demiurge-doctor-python-")
	if err != nil {
		rep.Python = pyworker.ProbeReport{Interpreter: cfg.Runtime.Python, Error: err.Error()}
		rep.warnMsg("python.unavailable", err.Error(), pythonRemedy)
		return
	}
	defer os.RemoveAll(scratch)
	procs, err := process.NewManager(process.ManagerOptions{ArtifactRoot: filepath.Join(scratch, "artifacts")})
	var pool *pyworker.Pool
	if err == nil {
		defer procs.Close(context.Background())
		pool = pyworker.New(pyworker.Options{
			Python: cfg.Runtime.Python, Processes: procs, Sandbox: SandboxProfile(h, cfg, getenv),
			Scratch: func(string) string { return filepath.Join(scratch, "home") },
		})
		defer pool.Close(context.Background())
	} else {
		pool = pyworker.New(pyworker.Options{Python: cfg.Runtime.Python})
	}
	rep.Python = pool.Probe(ctx)
	if rep.Python.Started {
		rep.pass()
		return
	}
	rep.warnMsg("python.unavailable", rep.Python.Error, pythonRemedy)
}

const pythonRemedy = "install Python 3 or set runtime.python in config.yaml; only cores with module.py slots or tools need it"
