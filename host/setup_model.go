package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/corerepo"
	"github.com/demiurge/demiurge/internal/atomicfile"
	"github.com/demiurge/demiurge/provider"
)

// ModelChange is `setup model set`.
type ModelChange struct {
	Core             string `json:"core"`
	Path             string `json:"path"`
	Provider         string `json:"provider"`
	Model            string `json:"model"`
	Revision         string `json:"revision"`
	PreviousRevision string `json:"previous_revision"`
}

// legacyModelKeys are the model keys of older cores that setup removes:
// keys and URLs belong to the provider profile, never to a core.
var legacyModelKeys = []string{"model_name_env", "base_url", "base_url_env", "api_key", "api_key_env"}

// SetModel points coreID's model section at providerID and model, as a
// commit of the core repository: local edits are saved first, the new
// agent.yaml passes the save gates (a core that no longer loads is
// refused and the file restored), and model.model_options are kept and
// checked against the provider's protocol.
func (s *Setup) SetModel(ctx context.Context, coreID, rawProvider, model string) (*ModelChange, error) {
	model = strings.TrimSpace(model)
	if model == "" {
		return nil, demiurge.Errorf(demiurge.EINVALID, "model name is required")
	}
	if err := s.prepare(); err != nil {
		return nil, err
	}
	cfg, _, err := s.readConfig()
	if err != nil {
		return nil, err
	}
	coreID = strings.TrimSpace(coreID)
	if coreID == "" {
		coreID = cfg.Runtime.DefaultCore
	}
	id := provider.NormalizeID(rawProvider)
	mode := provider.ModeFake
	if id != provider.FakeID {
		if p, ok := provider.LookupPreset(id); ok {
			mode = p.APIMode
		} else if c, ok := cfg.Providers.Custom[id]; ok {
			mode = c.APIMode
		} else {
			return nil, unknownProvider(id, cfg)
		}
	}
	path := filepath.Join(s.home.CoreDir(coreID), "agent.yaml")
	if _, err := os.Stat(path); err != nil {
		return nil, demiurge.Errorf(demiurge.ENOTFOUND, "core %q has no agent.yaml under %s", coreID, s.home.AgentsDir())
	}
	repo, err := OpenHomeRepo(ctx, s.home.Dir, s.getenv)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	previous, err := repo.EnsureSaved(ctx)
	if err != nil {
		return nil, err
	}
	old, err := os.ReadFile(path)
	if err != nil {
		return nil, demiurge.WrapError(demiurge.ECONFIG, err, "%s: cannot read: %s", path, demiurge.IOReason(err))
	}
	e, err := openYAMLEdit(path, old)
	if err != nil {
		return nil, err
	}
	for _, k := range legacyModelKeys {
		e.remove("model", k)
	}
	e.set(id, "model", "provider")
	e.set(model, "model", "model_name")
	if opts, ok := e.get("model", "model_options"); !ok || opts == nil {
		e.set(map[string]any{}, "model", "model_options")
	}
	data, err := e.bytes()
	if err != nil {
		return nil, err
	}
	if err := atomicfile.Write(path, data); err != nil {
		return nil, demiurge.WrapError(demiurge.ECONFIG, err, "write %s: %s", path, demiurge.IOReason(err))
	}
	restore := func(cause error) error {
		if werr := atomicfile.Write(path, old); werr != nil {
			return demiurge.WrapError(demiurge.ECONFIG, werr, "setup model: %s; and restoring %s failed: %s", demiurge.ErrorMessage(cause), path, demiurge.IOReason(werr))
		}
		return cause
	}
	c, err := core.Load(s.home.CoreDir(coreID))
	if err != nil {
		return nil, restore(err)
	}
	if err := provider.ValidateModelOptions(mode, c.Manifest.Model.ModelOptions); err != nil {
		return nil, restore(demiurge.WrapError(demiurge.ECONFIG, err, "%s: %s", path, demiurge.ErrorMessage(err)))
	}
	res, err := repo.Save(ctx, corerepo.SaveOptions{Reason: "update " + coreID + " model config"})
	if err != nil {
		return nil, restore(demiurge.WrapError(demiurge.ErrorCode(err), err, "setup model gates failed: %s", demiurge.ErrorMessage(err)))
	}
	return &ModelChange{Core: coreID, Path: path, Provider: id, Model: model, Revision: res.Revision, PreviousRevision: previous}, nil
}
