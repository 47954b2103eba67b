// Package cli is the demiurge command line: cobra commands over the host
// composition root. It is the only package, with host, that sees every other
// package. Run is what main calls and what end-to-end tests drive.
//
// Exit codes: 0 success; 1 the work ran and failed (a failed, cancelled or
// lost turn); 2 usage, configuration or core-load error, reported as one
// line on stderr. The commands, their flags and the --json objects are the
// CLI contract of DESIGN §4 (with the core commands of spec host-runtime
// §7.3 and §7.4).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/envfile"
)

// Exit codes.
const (
	ExitOK     = 0
	ExitFailed = 1
	ExitUsage  = 2
)

// exitError carries an exit code for an error already reported (or to be
// reported) to the user.
type exitError struct {
	code int
	err  error // nil when the output already told the story
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

// usageError marks a command-line mistake (exit 2).
func usageError(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// failed reports a run that happened and failed (exit 1) without more output.
func failed() error { return &exitError{code: ExitFailed} }

// IO is the standard streams of one invocation.
type IO struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// globals are the persistent flags and the environment of one invocation.
type globals struct {
	home string
	core string
	// timezone is --timezone (schedules and the clock tools).
	timezone string
	// getenv reads the invocation's environment; every command reads it
	// through here, never os.Getenv. Once the home is known it reads the
	// explicit environment first and the home's .env second (loadEnv).
	getenv func(string) string
	// environ reads the explicit environment only (getenv before loadEnv
	// layered the .env under it).
	environ func(string) string
	// env is the home's .env, read once per invocation (nil until loaded,
	// and for the commands that do not read it).
	env *envfile.File
	// exiting says the process exits when the command returns (Main).
	exiting bool
}

// skipEnv marks a command that does not read the home's .env (it would
// fail for a bad file where it has no use for it): version, completion,
// and doctor, which reports a bad .env as findings.
const skipEnv = "demiurge/skip-env"

// loadEnv reads the home's .env once and layers it under the explicit
// environment. Its values stay in this process's memory: nothing here
// sets a variable, so a child process never inherits one.
func (g *globals) loadEnv() error {
	if g.env != nil {
		return nil
	}
	home, err := g.homeDir()
	if err != nil {
		return err
	}
	f, err := envfile.Load(filepath.Join(home, ".env"))
	if err != nil {
		return err
	}
	g.env, g.environ, g.getenv = f, g.getenv, envfile.Layer(g.getenv, f)
	return nil
}

// Run executes the command line args with the process's environment and
// returns the exit code. Everything else an invocation uses is its own, so
// Run may be called many times in one process.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, &globals{getenv: os.Getenv}, args, stdin, stdout, stderr)
}

// Main is Run for the demiurge binary, whose process exits with the code
// Main returns: the Host a command opens is closed for that exit
// (host.Options.ExitAfterClose).
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, &globals{getenv: os.Getenv, exiting: true}, args, stdin, stdout, stderr)
}

func run(ctx context.Context, g *globals, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	streams := IO{In: stdin, Out: stdout, Err: stderr}
	root := newRoot(g, streams)
	// cobra reads os.Args when given nil arguments.
	if args == nil {
		args = []string{}
	}
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	return report(err, stderr)
}

// exitCodes maps error codes to exit codes at the edge; anything else is 1.
var exitCodes = map[string]int{
	demiurge.ECONFIG:   ExitUsage,
	demiurge.EINVALID:  ExitUsage,
	demiurge.ESCHEMA:   ExitUsage,
	demiurge.ENOTFOUND: ExitUsage,
}

func report(err error, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	code := ExitFailed
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		if ee.err == nil {
			return ee.code
		}
		code, err = ee.code, ee.err
	case isCobraUsage(err):
		code = ExitUsage
	default:
		if c, ok := exitCodes[demiurge.ErrorCode(err)]; ok {
			code = c
		}
	}
	msg := err.Error()
	if demiurge.ErrorCode(err) != demiurge.EINTERNAL {
		msg = demiurge.ErrorMessage(err)
	}
	fmt.Fprintf(stderr, "demiurge: %s\n", oneLine(msg))
	return code
}

// isCobraUsage reports whether err came from cobra's own argument parsing.
func isCobraUsage(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand", "unknown command", "flag needs an argument", "invalid argument", "accepts ", "requires at least", "bad flag syntax"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func newRoot(g *globals, streams IO) *cobra.Command {
	var showVersion bool
	root := &cobra.Command{
		Use:           "demiurge",
		Short:         "Host for self-evolving, file-backed Agent Cores",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if showVersion {
				_, err := fmt.Fprintln(streams.Out, readVersion())
				return err
			}
			return runChat(cmd.Context(), g, streams, chatFlags{})
		},
	}
	root.Flags().BoolVar(&showVersion, "version", false, "print the version and exit")
	root.CompletionOptions.DisableDefaultCmd = true
	root.PersistentFlags().StringVar(&g.home, "home", "", "runtime home (env DEMIURGE_HOME, default ~/.demiurge)")
	root.PersistentFlags().StringVar(&g.core, "core", "", "agent core id (default: config runtime.default_core, assistant)")
	root.PersistentFlags().StringVar(&g.timezone, "timezone", "", "IANA timezone of schedules and clocks (env DEMIURGE_TIMEZONE, default config.yaml runtime.timezone, then the host's)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if showVersion {
			return nil
		}
		for c := cmd; c != nil; c = c.Parent() {
			if c.Annotations[skipEnv] != "" {
				return nil
			}
		}
		return g.loadEnv()
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &exitError{code: ExitUsage, err: err} })
	root.AddCommand(newInitCmd(g, streams), newRunCmd(g, streams), newChatCmd(g, streams), newSessionsCmd(g, streams), newToolsCmd(g, streams), newTasksCmd(g, streams), newSchedulesCmd(g, streams), newServeCmd(g, streams), newGatewayCmd(g, streams), newMCPCmd(g, streams), newCoreCmd(g, streams), newDoctorCmd(g, streams), newStoreCmd(g, streams),
		newSetupCmd(g, streams), newVersionCmd(streams), newCompletionCmd(streams))
	return root
}

// homeDir resolves --home, then DEMIURGE_HOME, then ~/.demiurge.
func (g *globals) homeDir() (string, error) {
	if g.home != "" {
		return g.home, nil
	}
	if h := g.getenv("DEMIURGE_HOME"); h != "" {
		return h, nil
	}
	u, err := os.UserHomeDir()
	if err != nil {
		return "", demiurge.Errorf(demiurge.ECONFIG, "cannot find a home directory; set --home or DEMIURGE_HOME")
	}
	return filepath.Join(u, ".demiurge"), nil
}
