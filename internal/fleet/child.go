package fleet

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
)

// Environment of a fleet Host child: ChildEnv holds the machine name it
// stands for (and makes a program that calls RunChild a child);
// maxActiveEnv its host.Options.MaxActiveTasks.
const (
	ChildEnv     = "DEMIURGE_FLEET_CHILD"
	maxActiveEnv = "DEMIURGE_FLEET_MAX_ACTIVE"
)

// RunChild serves as a fleet Host child when ChildEnv is set, on the home
// of DEMIURGE_HOME and the ledger of DEMIURGE_DATABASE_URL, and returns
// its exit code; ok is false (and nothing ran) when it is not set. A test
// binary calls it from TestMain, the bench driver from main.
func RunChild() (code int, ok bool) {
	machine := os.Getenv(ChildEnv)
	if machine == "" {
		return 0, false
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	maxActive, _ := strconv.Atoi(os.Getenv(maxActiveEnv))
	err := Serve(ctx, Options{Home: os.Getenv("DEMIURGE_HOME"), MachineName: machine, Getenv: os.Getenv,
		MaxActiveTasks: maxActive}, os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet host:", err)
		return 1, true
	}
	return 0, true
}

// Command prepares exe (a program that calls RunChild) as a fleet Host
// child standing for machine, on its own runtime home home and the ledger
// at url; maxActive > 0 bounds the tasks it runs at once. Its stderr is
// the caller's.
func Command(exe, url, machine, home string, maxActive int) *exec.Cmd {
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), ChildEnv+"="+machine, "DEMIURGE_HOME="+home, "DEMIURGE_DATABASE_URL="+url)
	if maxActive > 0 {
		cmd.Env = append(cmd.Env, maxActiveEnv+"="+strconv.Itoa(maxActive))
	}
	cmd.Stderr = os.Stderr
	return cmd
}
