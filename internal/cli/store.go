package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/store"
)

// newStoreCmd is `demiurge store`, the operator's tools of the runtime
// ledger itself.
func newStoreCmd(g *globals, streams IO) *cobra.Command {
	cmd := &cobra.Command{Use: "store", Short: "Operator tools of the runtime ledger"}
	cmd.AddCommand(newStoreMigrateCmd(g, streams))
	return cmd
}

// newStoreMigrateCmd is `demiurge store migrate --to URL [--json]`: the
// home's SQLite ledger copied into an empty PostgreSQL database
// (host.MigrateStore). Exit 0 copied and verified; 2 nothing was copied
// because of what the operator can fix (no --to, a URL that is not
// postgres:// or names a server that cannot be reached, a target that is
// not empty, a database of a newer schema, a Host of the home still
// running); 1 the copy ran and failed (nothing was committed).
func newStoreMigrateCmd(g *globals, streams IO) *cobra.Command {
	var to string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "migrate --to URL",
		Short: "Copy the home's SQLite ledger into an empty PostgreSQL database and verify it",
		Long: `Copy every row of the home's SQLite ledger (runtime/runtime.sqlite3) into an
empty PostgreSQL database, in one transaction, and verify the row count of every
table. The home is not changed: point it at the copy afterwards (runtime.database
in config.yaml, or ` + host.DatabaseURLEnv + `). Stop every Host of the home (serve,
gateway, chat) first. --to defaults to ` + host.DatabaseURLEnv + `; a password is
better kept in PGPASSWORD or ~/.pgpass than on the command line.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to == "" {
				to = g.getenv(host.DatabaseURLEnv)
			}
			if to == "" {
				return usageError("store migrate needs --to postgres://… (or %s)", host.DatabaseURLEnv)
			}
			home, err := g.homeDir()
			if err != nil {
				return err
			}
			rep, err := host.MigrateStore(cmd.Context(), host.MigrateOptions{Home: home, To: to, Getenv: g.getenv})
			if err != nil {
				if demiurge.ErrorCode(err) == demiurge.ECONFLICT {
					return &exitError{code: ExitUsage, err: err}
				}
				return err
			}
			if asJSON {
				return writeJSON(streams.Out, toMigrateJSON(rep))
			}
			printMigrate(streams, rep)
			return nil
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the postgres:// URL of the empty target database (default "+host.DatabaseURLEnv+")")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// migrateJSON is `store migrate --json`.
type migrateJSON struct {
	Source         string             `json:"source"`
	Target         string             `json:"target"`
	SchemaVersion  int                `json:"schema_version"`
	Tables         []store.TableCount `json:"tables"`
	TotalRows      int64              `json:"total_rows"`
	Verified       bool               `json:"verified"`
	ConfigPath     string             `json:"config_path"`
	HomeUsesTarget bool               `json:"home_uses_target"`
}

func toMigrateJSON(rep host.MigrateReport) migrateJSON {
	return migrateJSON{Source: rep.Source, Target: rep.Target, SchemaVersion: rep.SchemaVersion, Tables: rep.Tables,
		TotalRows: rep.Rows, Verified: true, ConfigPath: rep.ConfigPath, HomeUsesTarget: rep.HomeUsesTarget}
}

func printMigrate(streams IO, rep host.MigrateReport) {
	printf(streams, "copied %s into %s (schema version %d)\n", rep.Source, rep.Target, rep.SchemaVersion)
	tw := tabwriter.NewWriter(streams.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tROWS")
	for _, c := range rep.Tables {
		fmt.Fprintf(tw, "%s\t%d\n", c.Table, c.Rows)
	}
	fmt.Fprintf(tw, "total\t%d\n", rep.Rows)
	tw.Flush()
	printf(streams, "verified: every table has as many rows in PostgreSQL as in SQLite\n")
	if rep.HomeUsesTarget {
		printf(streams, "the home already points at %s: its next command runs on PostgreSQL\n", rep.Target)
		return
	}
	printf(streams, "the home still runs on %s; point it at the copy with runtime.database in %s or %s (keep the password in the environment, PGPASSWORD or ~/.pgpass, not in config.yaml)\n",
		rep.Source, rep.ConfigPath, host.DatabaseURLEnv)
}
