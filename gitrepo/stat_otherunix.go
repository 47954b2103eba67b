//go:build unix && !linux && !darwin

package gitrepo

import "syscall"

// ctimeNs is unknown here: the index then relies on size, mtime and inode.
func ctimeNs(*syscall.Stat_t) int64 { return 0 }
