//go:build !unix

package mcp

import "os"

// openPrivateAppend opens path for appending, creating it 0600. Stdio
// servers are refused on these platforms, so nothing reaches it there.
func openPrivateAppend(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
}
