// Package tuibench measures the terminal UI for the bench driver, through
// a real pseudo-terminal read by a VT emulator (internal/vtpty), as an
// operator's terminal shows it:
//
//   - keystroke to rendered frame: the UI holds a 10,000-line transcript
//     (one fake-provider reply of TranscriptLines list items); each sample
//     types one character into the composer, or deletes one, and lasts
//     until the output that shows the composer's new text has reached the
//     terminal;
//   - idle CPU: the user and system time of the UI's process over a few
//     seconds with nothing to do, after the keystrokes, in percent of one
//     core (from /proc/<pid>/stat);
//   - resident memory with a long session open: a session of
//     SessionMessages messages is seeded through the Host and the store,
//     opened with `chat --session`, and VmRSS and VmHWM are read from
//     /proc/<pid>/status once its newest message is on the screen.
//
// Each measurement runs the demiurge binary it is given on its own home
// and workspace under the directory it is given, always with the fake
// provider, and kills and reaps it before returning. The measurements need
// Linux (/proc); elsewhere they return ErrUnsupported.
//
// It belongs to the bench driver (cmd/bench), which alone imports it.
package tuibench
