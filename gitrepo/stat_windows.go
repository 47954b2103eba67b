//go:build windows

package gitrepo

import "io/fs"

func statExtra(fs.FileInfo) (ctime int64, ino uint64) { return 0, 0 }

// execBitsMatter reports whether the file system keeps executable bits.
const execBitsMatter = false
