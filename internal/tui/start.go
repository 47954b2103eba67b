package tui

import (
	"context"

	"github.com/demiurge/demiurge"
)

// startConfig reads what the first frame shows: the UI settings, the
// core's tool display and revision, the provider and model. A core that
// does not load or a provider that does not resolve is said in the
// transcript, and the UI starts anyway: the operator can fix it and go on.
func startConfig(ctx context.Context, o Options) Config {
	h := o.Host
	s := h.UISettings()
	cfg := Config{
		Settings:    Settings{UserMessageAlign: s.UserMessageAlign, DemiurgeThemeColor: s.DemiurgeThemeColor, UserThemeColor: s.UserThemeColor},
		ToolDisplay: s.ToolDisplay,
		BusyMode:    s.BusyMode,
		SessionID:   o.SessionID,
		Status:      statusInfo{coreID: o.CoreID, provider: o.Provider, model: o.Model},
	}
	snap, err := h.LoadCore(ctx, o.CoreID)
	if err != nil {
		cfg.startNotices = append(cfg.startNotices, "core "+o.CoreID+" did not load: "+demiurge.ErrorMessage(err))
		return cfg
	}
	cfg.Status.revision = snap.Revision
	if d := snap.Core.Manifest.UI.ToolDisplay; d != "" {
		cfg.ToolDisplay = d
	}
	prov, model, err := h.ResolveModel(ctx, snap, o.Provider, o.Model)
	if err != nil {
		cfg.startNotices = append(cfg.startNotices, "provider: "+demiurge.ErrorMessage(err))
		return cfg
	}
	cfg.Status.provider, cfg.Status.model = prov, model
	return cfg
}
