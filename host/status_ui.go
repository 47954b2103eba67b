package host

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/yamlx"
	"github.com/demiurge/demiurge/provider"
)

// StatusSources say where the settings a status view shows come from:
// labels only, never a key.
type StatusSources struct {
	// Provider are the sources of the provider choice of a turn with the
	// given --provider and --model (provider.ResolveSources).
	Provider provider.Sources
	// ToolDisplay is where the core's tool display comes from: "core"
	// (its ui.tool_display), "fallback" (agents/agent.yaml's) or
	// "default"; ToolDisplayValue is that setting ("summary" by default).
	ToolDisplay, ToolDisplayValue string
	// BusyMode, UserMessageAlign, DemiurgeThemeColor, UserThemeColor and
	// ShowSystemPrompt are "config" when config.yaml sets the key,
	// "default" otherwise.
	BusyMode, UserMessageAlign, DemiurgeThemeColor, UserThemeColor, ShowSystemPrompt string
	// ShowSystemPromptValue is debug.show_system_prompt.
	ShowSystemPromptValue bool
	// CachedAllows counts the session's live "allow for this session"
	// grants.
	CachedAllows int
}

// StatusSources reads the sources of coreID's settings ("" the default
// core) for a turn with the --provider and --model choices flag and
// model, and the approval grants of sessionID ("" none). A core that does
// not load is its error.
func (h *Host) StatusSources(ctx context.Context, coreID, sessionID, flag, model string) (StatusSources, error) {
	coreID = h.coreOrDefault(coreID)
	snap, err := h.LoadCore(ctx, coreID)
	if err != nil {
		return StatusSources{}, err
	}
	p := h.providers
	s := StatusSources{
		Provider: provider.ResolveSources(provider.ResolveInput{
			Flag: flag, Model: model,
			CoreProvider: snap.Core.Manifest.Model.Provider, CoreModel: snap.Core.Manifest.Model.ModelName,
			FallbackProvider: p.fallback.provider, FallbackModel: p.fallback.model,
			Config: p.cfg, Getenv: p.getenv,
		}),
		ToolDisplay:           "default",
		ToolDisplayValue:      "summary",
		ShowSystemPromptValue: h.config.Debug.ShowSystemPrompt,
	}
	switch {
	case snap.Core.Manifest.UI.ToolDisplay != "":
		s.ToolDisplay, s.ToolDisplayValue = "core", snap.Core.Manifest.UI.ToolDisplay
	case h.globalUI.ToolDisplay != "":
		s.ToolDisplay, s.ToolDisplayValue = "fallback", h.globalUI.ToolDisplay
	}
	doc, err := h.configDocument()
	if err != nil {
		return StatusSources{}, err
	}
	from := func(path ...string) string {
		if doc != nil && doc.Has(path...) {
			return "config"
		}
		return "default"
	}
	s.BusyMode = from("channel", "busy_mode")
	s.UserMessageAlign = from("ui", "user_message_align")
	s.DemiurgeThemeColor = from("ui", "demiurge_theme_color")
	s.UserThemeColor = from("ui", "user_theme_color")
	s.ShowSystemPrompt = from("debug", "show_system_prompt")
	if sessionID != "" {
		s.CachedAllows = h.approvals.SessionGrants(sessionID)
	}
	return s, nil
}

// configDocument parses the home's config.yaml (nil when there is none:
// every setting is the default).
func (h *Host) configDocument() (*yamlx.Document, error) {
	path := h.home.ConfigPath()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, demiurge.WrapError(demiurge.ECONFIG, err, "%s: cannot read: %s", path, demiurge.IOReason(err))
	}
	return yamlx.Parse(path, data)
}
