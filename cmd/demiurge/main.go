// Command demiurge is the Demiurge host. See internal/cli for the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/demiurge/demiurge/internal/cli"
)

func main() {
	// The process exits with the command: it needs no signal.Stop, whose
	// hand-off with the signal goroutine would only delay the exit.
	ctx, _ := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	os.Exit(cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
