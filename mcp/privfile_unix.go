//go:build unix

package mcp

import (
	"os"
	"syscall"
)

// openPrivateAppend opens path for appending, creating it 0600, without
// following a link planted in its place.
func openPrivateAppend(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
}
