// Package e2e drives the built demiurge binary through the CLI contract of
// DESIGN §4: real processes, real SQLite homes in temporary directories,
// loopback HTTP servers standing in for providers. TestMain builds the
// binary once.
package e2e
