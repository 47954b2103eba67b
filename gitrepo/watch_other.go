//go:build !linux

package gitrepo

// watchState has no change notification here: the watch is never quiet,
// so every caller scans.
type watchState struct{}

func (*watchState) arm([]watchRoot) error { return nil }
func (*watchState) quiet() bool           { return false }
func (*watchState) close() error          { return nil }
