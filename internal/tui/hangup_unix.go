//go:build unix

package tui

import (
	"os"
	"os/signal"
	"syscall"
)

func notifyHangup(c chan os.Signal) { signal.Notify(c, syscall.SIGHUP) }
