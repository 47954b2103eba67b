//go:build !unix

package builtin_test

import "testing"

func runUnprivileged(t *testing.T, name string) {
	t.Skip("no unprivileged re-run on this platform")
}
