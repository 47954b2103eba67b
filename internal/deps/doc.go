// Package deps holds the test that keeps the package layering honest: the
// root vocabulary imports nothing of ours, pure policy imports only the root,
// adapters are leaves, engines never import adapters, and only the
// composition root and the CLI see everything. See docs/architecture.md.
package deps
