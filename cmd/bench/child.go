package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"time"
)

// childEnv is the environment of every demiurge child: the caller's, minus
// the variables that would pick a home, workspace, script or real provider,
// so the figures are always those of the fake provider on the bench's home.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "DEMIURGE_") || strings.HasPrefix(name, "OPENAI_") || strings.HasPrefix(name, "ANTHROPIC_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// demiurgeCmd prepares `bin --home home args…` in workspace. The caller's
// context kills it when cancelled; WaitDelay bounds how long Wait then
// waits for its output pipes.
func demiurgeCmd(ctx context.Context, bin, home, workspace string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, append([]string{"--home", home}, args...)...)
	cmd.Env = childEnv()
	cmd.Dir = workspace
	cmd.WaitDelay = 5 * time.Second
	return cmd
}
