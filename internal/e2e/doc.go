// Package e2e drives demiurge through the CLI contract of DESIGN §4: real
// SQLite homes in temporary directories, loopback HTTP servers standing in
// for providers, the real sandbox of this kernel.
//
// Most tests run each command in process through cli.Run, in the
// environment and working directory the binary would get (one invocation
// at a time owns them). The sandbox's helper re-executes /proc/self/exe,
// which is then this test binary: the sandbox package's init recognises
// the helper's argument here as in the demiurge binary, so terminal
// commands are confined in process too.
//
// Tests that need the Host as a process of its own run the built binary
// (built once, on first use): main's exit status and signal handling, a
// Host killed with SIGKILL and the recovery of what it left, several Hosts
// at once on one home, a Host under an address-space limit, and chat on a
// real pseudo-terminal.
package e2e
