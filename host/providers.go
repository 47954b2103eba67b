package host

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/envfile"
	"github.com/demiurge/demiurge/provider"
	"github.com/demiurge/demiurge/turn"
)

// providers resolves a turn's provider and keeps one client per resolved
// profile for the life of the Host, so a fake script is consumed in order
// across every turn of the process.
type providers struct {
	cfg        provider.Config
	fallback   fallbackModel
	fakeScript string
	getenv     func(string) string
	// envFile is the home's .env: every value of it is a secret.
	envFile *envfile.File

	// fakes keeps each fake script one sequence for the Host's life.
	fakes provider.Fakes

	mu    sync.Mutex // guards cache
	cache map[string]demiurge.Provider

	extraMu sync.Mutex // guards extra
	extra   []string   // channel credentials (addSecrets)
}

type fallbackModel struct {
	provider, model string
	options         map[string]any
}

func (p *providers) Resolve(_ context.Context, c turn.ProviderChoice) (turn.ResolvedModel, error) {
	in := provider.ResolveInput{
		Flag: c.Flag, Model: c.Model, CoreProvider: c.CoreProvider, CoreModel: c.CoreModel,
		FallbackProvider: p.fallback.provider, FallbackModel: p.fallback.model,
		CoreModelOptions: c.CoreModelOptions, FallbackModelOptions: p.fallback.options,
		Config: p.cfg, Getenv: p.getenv, FakeScript: p.fakeScript, Fakes: &p.fakes,
	}
	prov, res, err := provider.Resolve(in)
	if err != nil {
		return turn.ResolvedModel{}, err
	}
	// Cores with other model options get a client of their own
	// (encoding/json sorts map keys, so equal options give equal keys).
	opts, _ := json.Marshal(c.CoreModelOptions)
	key := res.ID + "\x00" + res.Model + "\x00" + res.BaseURL + "\x00" + string(opts)
	p.mu.Lock()
	defer p.mu.Unlock()
	if cached, ok := p.cache[key]; ok {
		prov = cached
	} else {
		if p.cache == nil {
			p.cache = map[string]demiurge.Provider{}
		}
		p.cache[key] = prov
	}
	return turn.ResolvedModel{Provider: prov, ID: res.ID, Model: res.Model, Limits: res.Limits}, nil
}

// Secrets returns credential values present in the environment: anything
// that looks like a key or token variable, every value of the home's .env
// (but those shorter than minEnvSecret, which would scrub ordinary words
// such as a timezone's name), plus configured profile keys. Persisted
// errors are scrubbed of each of them.
func (p *providers) Secrets() []string {
	var out []string
	if p.envFile != nil {
		for _, k := range p.envFile.Keys() {
			if v := p.envFile.Values[k]; len(v) >= minEnvSecret || (v != "" && secretName(k)) {
				out = append(out, v)
			}
		}
	}
	for _, kv := range os.Environ() {
		name, val, _ := strings.Cut(kv, "=")
		if val != "" && secretName(name) {
			out = append(out, val)
		}
	}
	for _, c := range p.cfg.Custom {
		if c.APIKey != "" {
			out = append(out, c.APIKey)
		}
	}
	p.extraMu.Lock()
	out = append(out, p.extra...)
	p.extraMu.Unlock()
	return out
}

// minEnvSecret is the shortest .env value taken as a secret whatever its
// name.
const minEnvSecret = 8

// secretName reports whether a variable's name says it holds a credential.
func secretName(name string) bool {
	u := strings.ToUpper(name)
	return strings.Contains(u, "API_KEY") || strings.HasSuffix(u, "_TOKEN") || strings.HasSuffix(u, "_SECRET")
}

// addSecrets adds credentials the Host learned besides the providers' (a
// channel's bot token or password): Secrets returns them from then on, so
// logs, turn errors and the gateway's stored errors redact them.
func (p *providers) addSecrets(vals []string) {
	p.extraMu.Lock()
	defer p.extraMu.Unlock()
	for _, v := range vals {
		if v != "" && !slices.Contains(p.extra, v) {
			p.extra = append(p.extra, v)
		}
	}
}
