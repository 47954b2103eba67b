package coregate

import (
	"maps"
	"slices"
)

// DependencyFiles returns the names (lower case) of the package manifests
// and lock files the dependency gate refuses, sorted. The Host also keeps
// the evolver from writing them, so a proposal never reaches the gate
// with one.
func DependencyFiles() []string { return slices.Sorted(maps.Keys(dependencyFiles)) }
