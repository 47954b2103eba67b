//go:build unix

package gitrepo

import (
	"io/fs"
	"syscall"
)

// statExtra returns the change time (unix ns) and inode of a file, which
// catch rewrites that keep size and mtime.
func statExtra(info fs.FileInfo) (ctime int64, ino uint64) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return ctimeNs(st), uint64(st.Ino)
}

// execBitsMatter reports whether the file system keeps executable bits.
const execBitsMatter = true
