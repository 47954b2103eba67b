//go:build unix

package vtpty

// The bytes a terminal sends for keys that are not text, in its default
// modes (no application cursor keys, no keyboard enhancements).
const (
	Enter     = "\r"
	Tab       = "\t"
	Backspace = "\x7f"
	Esc       = "\x1b"
	CtrlC     = "\x03"
	CtrlD     = "\x04"
	Up        = "\x1b[A"
	Down      = "\x1b[B"
	Right     = "\x1b[C"
	Left      = "\x1b[D"
	PgUp      = "\x1b[5~"
	PgDn      = "\x1b[6~"
	AltEnter  = "\x1b\r"
)
