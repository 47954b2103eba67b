package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/demiurge/demiurge/host"
)

// newSetupCmd is `demiurge setup` (spec surfaces §5.4): the wizard without
// a subcommand, and the non-interactive subcommands, each with --json.
// Secrets go to the home's .env only; no output shows one.
func newSetupCmd(g *globals, streams IO) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "setup",
		Short: "Configure providers, keys, the core's model and the timezone (wizard without a subcommand)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := g.setup()
			if err != nil {
				return err
			}
			return runWizard(cmd.Context(), g, s, streams)
		},
	}
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print JSON")
	out := func(v any) error { return writeSetup(streams.Out, v, asJSON) }

	status := &cobra.Command{
		Use:   "status",
		Short: "Show the home's providers, default, timezone and the core's model (creates nothing)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := g.setup()
			if err != nil {
				return err
			}
			st, err := s.Status(cmd.Context(), g.core, g.timezone)
			if err != nil {
				return err
			}
			return out(st)
		},
	}

	providers := &cobra.Command{Use: "providers", Short: "List, show, add, edit, remove, set-default or test provider profiles", Args: cobra.NoArgs}
	list := &cobra.Command{
		Use: "list", Short: "List every profile and whether its key is available (by variable name)", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			s, err := g.setup()
			if err != nil {
				return err
			}
			l, err := s.ListProviders()
			if err != nil {
				return err
			}
			return out(l)
		},
	}
	show := &cobra.Command{
		Use: "show ID", Short: "Show one profile", Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			s, err := g.setup()
			if err != nil {
				return err
			}
			id, p, err := s.ShowProvider(args[0])
			if err != nil {
				return err
			}
			return out(struct {
				Provider string            `json:"provider"`
				Profile  host.ProviderView `json:"profile"`
			}{id, p})
		},
	}
	edit := func(use, short string, isEdit bool) *cobra.Command {
		var ed host.ProviderEdit
		c := &cobra.Command{
			Use: use + " ID", Short: short, Args: cobra.ExactArgs(1),
			RunE: func(_ *cobra.Command, args []string) error {
				s, err := g.setup()
				if err != nil {
					return err
				}
				ed.Edit = isEdit
				ch, err := s.SaveProvider(args[0], ed)
				if err != nil {
					return err
				}
				return out(ch)
			},
		}
		f := c.Flags()
		f.StringVar(&ed.Preset, "preset", "", "builtin profile (must equal ID)")
		f.StringVar(&ed.APIMode, "api-mode", "", "openai-chat or anthropic-messages (custom profiles)")
		f.StringVar(&ed.BaseURL, "base-url", "", "API base URL (required for a new custom profile)")
		f.StringVar(&ed.APIKeyEnv, "api-key-env", "", "variable holding the key (custom profiles; default <ID>_API_KEY)")
		f.StringVar(&ed.APIKey, "api-key", "", "the key, written to the home's .env (needs --write-env)")
		f.BoolVar(&ed.WriteEnv, "write-env", false, "write --api-key to the home's .env")
		f.BoolVar(&ed.SetDefault, "set-default", false, "make it the default provider")
		return c
	}
	remove := &cobra.Command{
		Use: "remove ID", Short: "Remove a custom profile or a builtin's override (its key stays in .env)", Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			s, err := g.setup()
			if err != nil {
				return err
			}
			r, err := s.RemoveProvider(args[0])
			if err != nil {
				return err
			}
			return out(r)
		},
	}
	setDefault := &cobra.Command{
		Use: "set-default ID", Short: "Make a profile (or fake) the default provider", Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			s, err := g.setup()
			if err != nil {
				return err
			}
			d, err := s.SetDefaultProvider(args[0])
			if err != nil {
				return err
			}
			return out(struct {
				Default *string `json:"default_provider"`
			}{d})
		},
	}
	var testModel string
	test := &cobra.Command{
		Use: "test ID", Short: "Send one minimal request and report latency, model and the error, if any", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := g.setup()
			if err != nil {
				return err
			}
			r, err := s.TestProvider(cmd.Context(), args[0], testModel)
			if err != nil {
				return err
			}
			if asJSON {
				if err := writeJSON(streams.Out, r); err != nil {
					return err
				}
			} else if r.OK {
				fmt.Fprintf(streams.Out, "%s ok: model %s answered in %d ms: %s\n", r.Provider, r.Model, r.LatencyMS, oneLine(r.Response))
			}
			if r.OK {
				return nil
			}
			return &exitError{code: ExitFailed, err: fmt.Errorf("%s failed after %d ms (model %s, %s): %s: %s",
				r.Provider, r.LatencyMS, r.Model, r.BaseURL, testKindText(r.Error.Kind), r.Error.Message)}
		},
	}
	test.Flags().StringVar(&testModel, "model", "", "model to ask (default the profile's suggested model)")
	providers.AddCommand(list, show, edit("add", "Add a provider profile", false), edit("edit", "Edit a provider profile", true), remove, setDefault, test)

	model := &cobra.Command{Use: "model", Short: "Set a core's provider and model", Args: cobra.NoArgs}
	var modelProvider, modelName string
	modelSet := &cobra.Command{
		Use: "set", Short: "Point the core (--core) at --provider and --model, as a saved core revision", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := g.setup()
			if err != nil {
				return err
			}
			ch, err := s.SetModel(cmd.Context(), g.core, modelProvider, modelName)
			if err != nil {
				return err
			}
			return out(ch)
		},
	}
	modelSet.Flags().StringVar(&modelProvider, "provider", "", "provider profile id, or fake")
	modelSet.Flags().StringVar(&modelName, "model", "", "model name (required)")
	model.AddCommand(modelSet)

	tz := &cobra.Command{Use: "timezone", Short: "Set or clear config.yaml runtime.timezone", Args: cobra.NoArgs}
	tzSet := &cobra.Command{
		Use: "set ZONE", Short: "Set runtime.timezone to an IANA zone", Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return setTimezone(g, args[0], out)
		},
	}
	tzClear := &cobra.Command{
		Use: "clear", Short: "Clear runtime.timezone (the host's zone applies)", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return setTimezone(g, "", out) },
	}
	tz.AddCommand(tzSet, tzClear)

	var envKey, envValue string
	writeEnv := &cobra.Command{
		Use:   "write-env KEY",
		Short: "Write KEY to the home's .env (value from --value, else one line of stdin), keeping every other line",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			s, err := g.setup()
			if err != nil {
				return err
			}
			envKey = args[0]
			if envValue == "" {
				b, err := io.ReadAll(io.LimitReader(streams.In, 64<<10))
				if err != nil {
					return usageError("read stdin: %v", err)
				}
				envValue = strings.TrimRight(string(b), "\r\n")
			}
			if err := s.WriteEnv(envKey, envValue); err != nil {
				return err
			}
			return out(struct {
				EnvFile string `json:"env_file"`
				Key     string `json:"key"`
			}{s.Home().EnvPath(), envKey})
		},
	}
	writeEnv.Flags().StringVar(&envValue, "value", "", "the value (visible in the process list: prefer stdin)")

	cmd.AddCommand(status, providers, model, tz, writeEnv)
	return cmd
}

// testKindText says what a failed provider test's class means.
func testKindText(kind string) string {
	switch kind {
	case "key":
		return "the key was refused"
	case "model":
		return "the model or endpoint is unknown"
	case "quota":
		return "rate limit or quota exceeded"
	case "endpoint":
		return "the endpoint refused the request"
	}
	return "the endpoint could not be reached"
}

func setTimezone(g *globals, name string, out func(any) error) error {
	s, err := g.setup()
	if err != nil {
		return err
	}
	ch, err := s.SetTimezone(name)
	if err != nil {
		return err
	}
	return out(ch)
}

// setup returns the Setup of the invocation's home.
func (g *globals) setup() (*host.Setup, error) {
	home, err := g.homeDir()
	if err != nil {
		return nil, err
	}
	if err := g.loadEnv(); err != nil {
		return nil, err
	}
	return host.NewSetup(home, g.environ, g.env)
}

// writeSetup prints a setup result: pretty JSON with --json; otherwise
// one "key: value" line per top-level key, objects and lists as JSON with
// ", " and ": " separators (the original's output).
func writeSetup(w io.Writer, v any, asJSON bool) error {
	if asJSON {
		return writeJSON(w, v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var buf bytes.Buffer
	for _, k := range keys {
		buf.WriteString(k + ": ")
		if s, ok := m[k].(string); ok {
			buf.WriteString(s)
		} else {
			writeLoose(&buf, m[k])
		}
		buf.WriteByte('\n')
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// writeLoose writes v as JSON with sorted keys and ", " / ": " separators.
func writeLoose(buf *bytes.Buffer, v any) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteString(", ")
			}
			kb, _ := json.Marshal(k)
			buf.Write(kb)
			buf.WriteString(": ")
			writeLoose(buf, t[k])
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				buf.WriteString(", ")
			}
			writeLoose(buf, e)
		}
		buf.WriteByte(']')
	default:
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(t)
		buf.Truncate(buf.Len() - 1) // Encode's newline
	}
}
