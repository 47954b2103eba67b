// Package rootfs is file I/O under an os.Root for the builtin tools:
// atomic replacement (a synced hidden temporary file renamed over the
// target), link checks along a relative path and bounded whole-file
// reads.
package rootfs
