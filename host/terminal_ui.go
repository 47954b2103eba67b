package host

import (
	"context"

	"github.com/demiurge/demiurge/turn"
)

// UISettings are the settings an interactive front end renders by:
// config.yaml's ui and channel sections, defaults applied, and the global
// fallback's ui.tool_display.
type UISettings struct {
	UserMessageAlign   string // left or right
	DemiurgeThemeColor string // #rrggbb
	UserThemeColor     string // #rrggbb
	BusyMode           string // interrupt or queue
	// ToolDisplay is agents/agent.yaml's ui.tool_display: quiet, summary,
	// full, or "" when unset (a core's own setting wins over it).
	ToolDisplay string
}

// The defaults of the ui section (spec surfaces §2.10).
const (
	defaultUserMessageAlign   = "left"
	defaultDemiurgeThemeColor = "#ff9afc"
	defaultUserThemeColor     = "#9cc9ff"
)

// UISettings returns the UI settings of this Host's home.
func (h *Host) UISettings() UISettings {
	s := UISettings{
		UserMessageAlign:   h.config.UI.UserMessageAlign,
		DemiurgeThemeColor: h.config.UI.DemiurgeThemeColor,
		UserThemeColor:     h.config.UI.UserThemeColor,
		BusyMode:           h.config.Channel.BusyMode,
		ToolDisplay:        h.globalUI.ToolDisplay,
	}
	if s.UserMessageAlign == "" {
		s.UserMessageAlign = defaultUserMessageAlign
	}
	if s.DemiurgeThemeColor == "" {
		s.DemiurgeThemeColor = defaultDemiurgeThemeColor
	}
	if s.UserThemeColor == "" {
		s.UserThemeColor = defaultUserThemeColor
	}
	return s
}

// ResolveModel names the provider profile and model a turn of snap's core
// would use with these overrides (flag "" or "auto": the core's and the
// config's choice), as the turn resolves them.
func (h *Host) ResolveModel(ctx context.Context, snap turn.Snapshot, flag, model string) (providerID, modelName string, err error) {
	rm, err := h.providers.Resolve(ctx, turn.ProviderChoice{
		Flag: flag, Model: model,
		CoreProvider: snap.Core.Manifest.Model.Provider, CoreModel: snap.Core.Manifest.Model.ModelName,
		CoreModelOptions: snap.Core.Manifest.Model.ModelOptions,
	})
	return rm.ID, rm.Model, err
}
