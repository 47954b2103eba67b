//go:build !unix

package tui

import "os"

// notifyHangup does nothing where there is no SIGHUP: a closed console
// ends the input, which ends the program.
func notifyHangup(chan os.Signal) {}
