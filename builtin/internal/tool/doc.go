// Package tool holds what every builtin toolset shares below it: the
// typed adapter (arguments decoded once, the tool's own argument
// sentences), the outcome helpers (invalid, denied, unavailable,
// succeeded), the spec's text bounds and per-key locks.
package tool
