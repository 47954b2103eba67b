//go:build !unix

package cli

import "io"

// interruptibleInput returns r as it is: without poll, a read that waits
// for the operator cannot be interrupted; it ends with the process.
func interruptibleInput(r io.Reader) (io.Reader, func(), bool) {
	return r, func() {}, false
}
