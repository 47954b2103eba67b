//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package cli

import "io"

// echoOff cannot turn a terminal's echo off here: the wizard says the key
// would be shown, and `setup write-env KEY` (reading stdin) remains.
func echoOff(io.Reader) (restore func(), ok bool) { return nil, false }
