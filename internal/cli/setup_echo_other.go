//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package cli

import "io"

// echoOff cannot turn a terminal's echo off here: the wizard's key prompt
// says the key is shown as typed and points to `setup write-env KEY`,
// which reads it from stdin.
func echoOff(io.Reader) (restore func(), ok bool) { return nil, false }
