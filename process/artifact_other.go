//go:build !unix

package process

// openNoFollow is 0: O_EXCL already refuses an existing final component,
// link or not.
const openNoFollow = 0

// errnoName has no symbolic names to offer here.
func errnoName(error) string { return "" }
