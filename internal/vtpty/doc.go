// Package vtpty runs a program on a real pseudo-terminal of a fixed size
// and reads what it draws through a VT emulator, as an operator's
// terminal would show it. The end-to-end tests of the terminal UI and the
// bench driver's terminal figures drive the demiurge binary through it.
//
// A Term owns the pseudo-terminal's master side, the emulator and two
// goroutines: one moves the program's output into the emulator, the other
// moves the emulator's replies to the program's queries (device
// attributes, cursor position, colours) back into the terminal, as a real
// terminal answers them. Typed input goes straight to the master side as
// the bytes a terminal sends for those keys.
//
// Open gives a Term whose slave side the caller hands to whatever it runs
// (a command, or cli.Run in this process); Start runs an exec.Cmd on it in
// a session of its own with the terminal as its controlling terminal.
// Close kills the started program's process group if it is still running,
// reaps it, closes the terminal and waits for both goroutines: nothing of
// a Term outlives Close.
//
// Waiting is on conditions, never on time: WaitFor re-evaluates its
// condition each time output has changed the screen and gives up at the
// context's deadline with the screen in the error.
//
// The package is for Unix; on other systems it has no API.
package vtpty
