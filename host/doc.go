// Package host is the composition root: it opens a runtime home, wires the
// store, sessions, turns, slots, effects, deliveries and providers together,
// and closes them in order. It is the only package besides internal/cli that
// sees every other package; nothing imports it but the CLI and end-to-end
// tests.
//
// # Lifecycle
//
// Open initialises a missing home (directories 0700, files 0600), opens the
// store, takes a heartbeat lease for this process and reconciles work left by
// Host processes that are gone. Close cancels running turns, stops the lease
// and closes the store. Several Host processes may share one home.
//
// # API
//
// The Host's subsystems are unexported: a front end (the CLI, a channel)
// runs turns with Run and reads and acts through methods (sessions, turns,
// tasks, schedules, MCP servers, evolution), the operator's reads in the
// operator scope. Doctor and InitHome work on a home without opening a
// Host, for the repair and health commands that must work while the Host
// cannot open.
package host
