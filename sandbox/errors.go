package sandbox

// Limits are the resource limits of a sandboxed process tree.
type Limits struct {
	// FileBytes bounds the size of any file the command writes
	// (RLIMIT_FSIZE; the kernel sends SIGXFSZ).
	FileBytes uint64 `json:"file_bytes"`
	// CPUSeconds bounds the CPU time of each process (RLIMIT_CPU; SIGXCPU).
	CPUSeconds uint64 `json:"cpu_seconds"`
	// Processes bounds the processes and threads of the sandbox
	// (RLIMIT_NPROC, counted per user namespace): a fork bomb fails with
	// EAGAIN instead of exhausting the Host's pids.
	Processes uint64 `json:"processes"`
}

// DefaultLimits are generous: they stop runaway commands, not real work.
var DefaultLimits = Limits{FileBytes: 8 << 30, CPUSeconds: 600, Processes: 4096}

// Report is the sandbox's state on this machine, for doctor.
type Report struct {
	Mode     Mode     `json:"mode"`
	Network  string   `json:"network"` // "on" or "off"
	Working  bool     `json:"working"` // a probe sandbox was built
	Landlock int      `json:"landlock_abi"`
	Missing  []string `json:"missing,omitempty"` // kernel features the sandbox needs and lacks
	Error    string   `json:"error,omitempty"`   // why the probe failed
}

// StartError is a sandbox that could not be built: the command never ran.
type StartError struct{ Reason string }

func (e *StartError) Error() string { return "sandbox failed to start: " + e.Reason }

// UnavailableError is a kernel feature the sandbox needs and lacks.
type UnavailableError struct{ Feature string }

func (e *UnavailableError) Error() string {
	return "sandbox unavailable: the kernel lacks " + e.Feature + " (an operator may set sandbox.mode: off in config.yaml to run unsandboxed)"
}

// Unavailable returns the error for a missing feature.
func Unavailable(feature string) error { return &UnavailableError{Feature: feature} }
