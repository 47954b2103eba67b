package cli

import (
	"cmp"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// buildDate is the build's date, set by the linker
// (-ldflags "-X github.com/demiurge/demiurge/internal/cli.buildDate=…");
// without it, the commit's date from the build info.
var buildDate string

// versionInfo is `demiurge version --json`.
type versionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Modified  bool   `json:"modified"`
	GoVersion string `json:"go_version"`
	BuildDate string `json:"build_date"`
	Platform  string `json:"platform"`
}

// readVersion reads the binary's build info (only when asked: nothing of
// it is read at start).
func readVersion() versionInfo {
	v := versionInfo{Version: "(devel)", Commit: "unknown", GoVersion: runtime.Version(), BuildDate: buildDate,
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	v.GoVersion = cmp.Or(bi.GoVersion, v.GoVersion)
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.BuildDate = cmp.Or(v.BuildDate, s.Value)
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	v.BuildDate = cmp.Or(v.BuildDate, "unknown")
	return v
}

// String is the one line of `demiurge --version`.
func (v versionInfo) String() string {
	commit := v.Commit
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if v.Modified {
		commit += "+dirty"
	}
	return fmt.Sprintf("demiurge %s (commit %s, built %s, %s, %s)", v.Version, commit, v.BuildDate, v.GoVersion, v.Platform)
}

func newVersionCmd(streams IO) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:         "version",
		Short:       "Print the version, commit, Go version and build date",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{skipEnv: "1"},
		RunE: func(*cobra.Command, []string) error {
			v := readVersion()
			if asJSON {
				return writeJSON(streams.Out, v)
			}
			_, err := fmt.Fprintln(streams.Out, v)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// newCompletionCmd is `demiurge completion bash|zsh|fish|powershell`: the
// shell's completion script on stdout.
func newCompletionCmd(streams IO) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print the shell completion script (e.g. `source <(demiurge completion bash)`)",
		Long: `Print the completion script of a shell on stdout.

  bash:        source <(demiurge completion bash)
               (or save it as /etc/bash_completion.d/demiurge)
  zsh:         demiurge completion zsh > "${fpath[1]}/_demiurge"
  fish:        demiurge completion fish > ~/.config/fish/completions/demiurge.fish
  powershell:  demiurge completion powershell | Out-String | Invoke-Expression`,
		Args:        cobra.ExactArgs(1),
		ValidArgs:   []string{"bash", "zsh", "fish", "powershell"},
		Annotations: map[string]string{skipEnv: "1"},
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(streams.Out, true)
			case "zsh":
				return root.GenZshCompletion(streams.Out)
			case "fish":
				return root.GenFishCompletion(streams.Out, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(streams.Out)
			}
			return usageError("completion: unknown shell %q (want bash, zsh, fish or powershell)", args[0])
		},
	}
}
