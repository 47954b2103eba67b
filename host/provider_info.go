package host

import (
	"context"

	"github.com/demiurge/demiurge/provider"
)

// ProviderInfo says which provider, API mode, model and base URL a turn of
// coreID would use with the --provider and --model choices flag and model
// ("" or "auto": the core's, the fallback's, config.yaml's), the way the
// turn resolves them, without calling the provider. It carries no key.
// A choice that does not resolve (an unknown profile, a missing key) is
// the error the turn would fail with.
func (h *Host) ProviderInfo(ctx context.Context, coreID, flag, model string) (provider.Resolved, error) {
	coreID = h.coreOrDefault(coreID)
	snap, err := h.LoadCore(ctx, coreID)
	if err != nil {
		return provider.Resolved{}, err
	}
	p := h.providers
	_, res, err := provider.Resolve(provider.ResolveInput{
		Flag: flag, Model: model,
		CoreProvider: snap.Core.Manifest.Model.Provider, CoreModel: snap.Core.Manifest.Model.ModelName,
		FallbackProvider: p.fallback.provider, FallbackModel: p.fallback.model,
		CoreModelOptions: snap.Core.Manifest.Model.ModelOptions, FallbackModelOptions: p.fallback.options,
		Config: p.cfg, Getenv: p.getenv, FakeScript: p.fakeScript, Fakes: &p.fakes,
	})
	return res, err
}
