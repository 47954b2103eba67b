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
package host
