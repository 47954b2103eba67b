// Package deps holds the test that keeps the package layering honest: the
// root vocabulary imports nothing of ours, pure policy imports only the
// root, adapters are leaves, engines import neither adapters nor other
// engines, and only the composition root and the CLI see everything. Every
// package has a layer and every layer entry a package; each exception to
// the rules is one named edge with its reason, and fails the test once it
// is needless. See docs/architecture.md.
package deps
