package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/provider"
)

// errCanceled ends the wizard on Ctrl-C or the end of its input.
var errCanceled = errors.New("canceled")

// wizard is the interactive `demiurge setup`: a menu of the setup steps,
// one question per line. Its input has one reader (a lineSource), and the
// key is typed with the terminal's echo off.
type wizard struct {
	ctx     context.Context
	g       *globals
	s       *host.Setup
	streams IO
	lines   *lineSource
	// hidden turns the terminal's echo off until the returned function
	// turns it back on; ok is false where it cannot (not a terminal).
	hidden func() (restore func(), ok bool)
}

func runWizard(ctx context.Context, g *globals, s *host.Setup, streams IO) error {
	w := &wizard{ctx: ctx, g: g, s: s, streams: streams, lines: newLineSource(streams.In),
		hidden: func() (func(), bool) { return echoOff(streams.In) }}
	defer w.lines.Close()
	w.say("demiurge setup\nRuntime home: %s\n", s.Home().Dir)
	for {
		err := w.menu()
		if errors.Is(err, errCanceled) {
			w.say("\nCanceled.\n")
			return nil
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (w *wizard) say(format string, args ...any) { fmt.Fprintf(w.streams.Out, format, args...) }

// ask prints prompt (with the default in brackets) and returns the answer,
// or def for an empty one.
func (w *wizard) ask(prompt, def string) (string, error) {
	if def != "" {
		w.say("%s [%s]: ", prompt, def)
	} else {
		w.say("%s: ", prompt)
	}
	l, err := w.lines.Next(w.ctx)
	switch {
	case errors.Is(err, io.EOF):
		return "", errCanceled
	case err != nil:
		return "", errCanceled
	}
	if v := strings.TrimSpace(l.text); v != "" {
		return v, nil
	}
	return def, nil
}

// askSecret asks for a value without echoing it where the input is a
// terminal.
func (w *wizard) askSecret(prompt string) (string, error) {
	restore, ok := w.hidden()
	switch {
	case ok:
		prompt += " (input hidden)"
	case isTerminal(w.streams.In):
		prompt += " (shown as typed here; `demiurge setup write-env NAME` reads it from stdin instead)"
	}
	v, err := w.ask(prompt, "")
	if ok {
		restore()
		w.say("\n")
	}
	return v, err
}

// choose offers numbered options and returns the index picked.
func (w *wizard) choose(title string, options []string, def int) (int, error) {
	w.say("%s\n", title)
	for i, o := range options {
		w.say("  %d) %s\n", i+1, o)
	}
	for {
		a, err := w.ask(fmt.Sprintf("Choose 1-%d", len(options)), strconv.Itoa(def+1))
		if err != nil {
			return 0, err
		}
		if n, err := strconv.Atoi(a); err == nil && n >= 1 && n <= len(options) {
			return n - 1, nil
		}
		for i, o := range options {
			if strings.EqualFold(a, o) || strings.EqualFold(a, strings.Fields(o)[0]) {
				return i, nil
			}
		}
		w.say("Please answer 1-%d.\n", len(options))
	}
}

// report prints a step's failure and goes on with the menu.
func (w *wizard) report(err error) {
	msg := err.Error()
	if demiurge.ErrorCode(err) != demiurge.EINTERNAL {
		msg = demiurge.ErrorMessage(err)
	}
	w.say("error: %s\n", oneLine(msg))
}

func (w *wizard) menu() error {
	steps := []string{"Status", "Add provider", "Set default provider", "Set core model", "Set timezone", "Exit"}
	i, err := w.choose("\nWhat would you like to do?", steps, 0)
	if err != nil {
		return err
	}
	var stepErr error
	switch steps[i] {
	case "Status":
		var st *host.SetupStatus
		if st, stepErr = w.s.Status(w.ctx, w.g.core, w.g.timezone); stepErr == nil {
			stepErr = writeSetup(w.streams.Out, st, false)
		}
	case "Add provider":
		stepErr = w.addProvider()
	case "Set default provider":
		stepErr = w.setDefault()
	case "Set core model":
		stepErr = w.setModel("", "")
	case "Set timezone":
		stepErr = w.setTimezone()
	case "Exit":
		return io.EOF
	}
	if stepErr != nil && !errors.Is(stepErr, errCanceled) {
		w.report(stepErr)
		return nil
	}
	return stepErr
}

func (w *wizard) addProvider() error {
	presets := provider.Presets()
	options := make([]string, 0, len(presets)+1)
	for _, p := range presets {
		options = append(options, fmt.Sprintf("%s (%s)", p.ID, p.Display))
	}
	options = append(options, "Custom (any OpenAI Chat-compatible endpoint)")
	i, err := w.choose("Provider:", options, 0)
	if err != nil {
		return err
	}
	var id, keyEnv, suggested string
	ed := host.ProviderEdit{WriteEnv: true}
	if i < len(presets) {
		p := presets[i]
		id, keyEnv, suggested = p.ID, p.KeyEnv[0], p.Model
		ed.Edit = true // keep a base_url override the profile has
	} else {
		if id, err = w.ask("Profile id", "custom"); err != nil {
			return err
		}
		id = provider.NormalizeID(id)
		if ed.BaseURL, err = w.ask("Base URL", "http://localhost:11434/v1"); err != nil {
			return err
		}
		if keyEnv, err = w.ask("API key variable", host.DefaultKeyEnv(id)); err != nil {
			return err
		}
		ed.APIKeyEnv = keyEnv
	}
	key, err := w.askSecret(fmt.Sprintf("API key for %s (saved to .env as %s; empty keeps the current one)", id, keyEnv))
	if err != nil {
		return err
	}
	ed.APIKey = key
	yes, err := w.ask(fmt.Sprintf("Use %s as default provider? (y/n)", id), "y")
	if err != nil {
		return err
	}
	ed.SetDefault = strings.HasPrefix(strings.ToLower(yes), "y")
	ch, err := w.s.SaveProvider(id, ed)
	if err != nil {
		return err
	}
	w.say("saved provider profile %s\n", ch.Provider)
	if ch.EnvWritten != "" {
		w.say("wrote %s to %s\n", ch.EnvWritten, w.s.Home().EnvPath())
	}
	return w.setModel(ch.Provider, suggested)
}

func (w *wizard) setDefault() error {
	st, err := w.s.ListProviders()
	if err != nil {
		return err
	}
	ids := append([]string{provider.FakeID}, slices.Sorted(maps.Keys(st.Providers))...)
	i, err := w.choose("Default provider:", ids, 0)
	if err != nil {
		return err
	}
	d, err := w.s.SetDefaultProvider(ids[i])
	if err != nil {
		return err
	}
	w.say("default provider: %s\n", *d)
	return nil
}

// setModel asks for a core and a model and sets them; providerID ""
// asks for the provider too.
func (w *wizard) setModel(providerID, suggested string) error {
	st, err := w.s.Status(w.ctx, "", w.g.timezone)
	if err != nil {
		return err
	}
	coreID, err := w.ask("Core id", st.CoreModel.Core)
	if err != nil {
		return err
	}
	if providerID == "" {
		ids := append([]string{provider.FakeID}, slices.Sorted(maps.Keys(st.Providers))...)
		i, err := w.choose("Provider:", ids, 0)
		if err != nil {
			return err
		}
		providerID = ids[i]
		if p, ok := st.Providers[providerID]; ok {
			suggested = p.SuggestedModel
		} else {
			suggested = provider.FakeModel
		}
	}
	var model string
	for model == "" {
		if model, err = w.ask("Model", suggested); err != nil {
			return err
		}
		if model == "" {
			w.say("Model is required.\n")
		}
	}
	ch, err := w.s.SetModel(w.ctx, coreID, providerID, model)
	if err != nil {
		return err
	}
	w.say("updated %s model (%s %s, revision %s)\n", ch.Core, ch.Provider, ch.Model, ch.Revision)
	return nil
}

func (w *wizard) setTimezone() error {
	name, err := w.ask("Timezone (IANA name such as Europe/Berlin; empty clears it)", "")
	if err != nil {
		return err
	}
	ch, err := w.s.SetTimezone(name)
	if err != nil {
		return err
	}
	w.say("timezone: %s (%s)\n", ch.Timezone, ch.Source)
	return nil
}
