// Package udiff writes unified diffs in the form of Python's
// difflib.unified_diff (lineterm=""), which the spec's tool results show.
// No library in reach writes that exact form; the edit script is a
// bounded Myers search.
package udiff
