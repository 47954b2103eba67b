//go:build !unix

package process

import "os"

// openNoFollow is 0: O_EXCL already refuses an existing final component,
// link or not.
const openNoFollow = 0

// errnoName has no symbolic names to offer here.
func errnoName(error) string { return "" }

// writeBoth writes a and then b to f.
func writeBoth(f *os.File, a, b []byte) (int, error) {
	n, err := f.Write(a)
	if err != nil {
		return n, err
	}
	m, err := f.Write(b)
	return n + m, err
}
