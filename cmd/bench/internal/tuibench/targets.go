package tuibench

import (
	"errors"
	"time"
)

// The figures' targets and workloads.
const (
	// KeystrokeTarget is the limit on the median keystroke-to-frame time.
	KeystrokeTarget = 16 * time.Millisecond
	// IdleCPUTarget is the limit on idle CPU, in percent of one core.
	IdleCPUTarget = 1.0
	// RSSTarget is the limit on VmRSS with the long session open, in MiB.
	RSSTarget = 80.0
	// TranscriptLines is the length of the transcript the keystrokes are
	// typed under.
	TranscriptLines = 10_000
	// SessionMessages is the size of the session the memory is read with.
	SessionMessages = 10_000
)

// Terminal size of every measurement.
const (
	cols = 100
	rows = 30
)

// ErrUnsupported is returned by the measurements outside Linux.
var ErrUnsupported = errors.New("tuibench: needs Linux (/proc and pseudo-terminals)")

// Keystrokes is the keystroke figure and the idle figure of one UI run.
type Keystrokes struct {
	// Samples are the times from each keystroke to the frame showing it.
	Samples []time.Duration
	// IdleCPU is the UI process's CPU time over Idle, in percent of one
	// core.
	IdleCPU float64
	Idle    time.Duration
	// IdleOutput is what the UI wrote to the terminal over Idle, in bytes:
	// a UI that redraws while idle shows here.
	IdleOutput int64
}

// Memory is the resident memory of the UI with the seeded session open,
// in MiB.
type Memory struct {
	RSS, HWM float64
	// Messages is the number of messages seeded.
	Messages int
}
