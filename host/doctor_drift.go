package host

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/internal/envfile"
	"github.com/demiurge/demiurge/provider"
)

// templateCores are the cores the binary embeds: the ones whose drift from
// their template the doctor reports.
var templateCores = []string{core.TemplateAssistant, core.TemplateEvolver}

// TemplateDrift compares the home's global fallback and the template cores
// among coreIDs (assistant and evolver are always checked) with the
// templates embedded in this binary (spec surfaces §5.6): missing
// fallback (runtime.fallback.missing, error) or fallback keys
// (global_config.missing_fields), a missing core (runtime.core.missing,
// error; a core that does not load is not compared), a builtin tool set that differs (core.tools.missing / core.tools.extra),
// agent.yaml slots keys (core.slots.missing_keys), slot and authored tool
// directories (core.input.missing_slots, core.output.missing_slots,
// core.tools.missing_slots) and skills (core.skills.missing,
// core.skills.metadata_drift) the template has and the core lacks. Drift
// is a warning: an evolved core may differ on purpose.
func TemplateDrift(h Home, coreIDs ...string) ([]DoctorFinding, error) {
	tmp, err := os.MkdirTemp("", "demiurge-templates-")
	if err != nil {
		return nil, demiurge.WrapError(demiurge.EINTERNAL, err, "cannot create a temporary directory: %s", demiurge.IOReason(err))
	}
	defer os.RemoveAll(tmp)
	if err := core.InstallTemplates(tmp, core.TemplateAll, false); err != nil {
		return nil, err
	}
	var out []DoctorFinding
	add := func(sev, code, msg, fix string, details map[string]any) {
		out = append(out, DoctorFinding{Severity: sev, Code: code, Message: msg, Remediation: fix, Details: details})
	}

	global := filepath.Join(h.AgentsDir(), "agent.yaml")
	if _, err := os.Stat(global); errors.Is(err, fs.ErrNotExist) {
		add("error", "runtime.fallback.missing", "the global fallback "+global+" is missing", "run `demiurge init --refresh global`", map[string]any{"path": global})
	} else if missing := missingKeys(filepath.Join(tmp, "agent.yaml"), global); len(missing) > 0 {
		add("warning", "global_config.missing_fields", fmt.Sprintf("the global fallback lacks %s of the template", strings.Join(missing, ", ")),
			"add them to agents/agent.yaml, or `demiurge init --refresh global`", map[string]any{"path": global, "missing": missing})
	}

	ids := slices.Clone(templateCores)
	for _, id := range coreIDs {
		if slices.Contains(templateCores, id) && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		src, err := core.Load(filepath.Join(tmp, id))
		if err != nil {
			return nil, err // the embedded template must load
		}
		dir := h.CoreDir(id)
		if _, err := os.Stat(filepath.Join(dir, "agent.yaml")); errors.Is(err, fs.ErrNotExist) {
			add("error", "runtime.core.missing", fmt.Sprintf("core %s is missing (%s)", id, dir), "run `demiurge init --refresh "+id+"`", map[string]any{"core": id, "path": dir})
			continue
		}
		c, err := core.Load(dir)
		if err != nil {
			continue // a core that does not load is its loader's finding (core.load_failed)
		}
		fix := "compare with the template (`demiurge init --refresh " + id + "` restores it, replacing the core's own files)"
		diff := func(code, what string, want, have []string, extra bool) {
			var gone []string
			for _, w := range want {
				if !slices.Contains(have, w) {
					gone = append(gone, w)
				}
			}
			if len(gone) > 0 {
				verb := "lacks"
				if extra {
					verb = "has, beyond the template,"
				}
				add("warning", code, fmt.Sprintf("core %s %s %s %s", id, verb, what, strings.Join(gone, ", ")), fix, map[string]any{"core": id, "names": gone})
			}
		}
		diff("core.tools.missing", "the builtin tools", src.Builtins, c.Builtins, false)
		diff("core.tools.extra", "the builtin tools", c.Builtins, src.Builtins, true)
		diff("core.slots.missing_keys", "the agent.yaml slots keys", slotKeys(filepath.Join(tmp, id, "agent.yaml")), slotKeys(filepath.Join(dir, "agent.yaml")), false)
		diff("core.input.missing_slots", "the input slots", slotIDs(src, core.PhaseInput), slotIDs(c, core.PhaseInput), false)
		diff("core.output.missing_slots", "the output slots", slotIDs(src, core.PhaseOutput), slotIDs(c, core.PhaseOutput), false)
		diff("core.tools.missing_slots", "the authored tools", toolNames(src), toolNames(c), false)
		var missing, drifted []string
		for _, s := range src.Skills {
			i := slices.IndexFunc(c.Skills, func(k core.Skill) bool { return k.ID == s.ID })
			switch {
			case i < 0:
				missing = append(missing, s.ID)
			case c.Skills[i].Category != s.Category || !maps.EqualFunc(c.Skills[i].LinkedFiles, s.LinkedFiles, slices.Equal[[]string]):
				drifted = append(drifted, s.ID)
			}
		}
		if len(missing) > 0 {
			add("warning", "core.skills.missing", fmt.Sprintf("core %s lacks the skills %s", id, strings.Join(missing, ", ")), fix, map[string]any{"core": id, "names": missing})
		}
		if len(drifted) > 0 {
			add("warning", "core.skills.metadata_drift", fmt.Sprintf("core %s has skills whose category or linked files differ from the template: %s", id, strings.Join(drifted, ", ")), fix, map[string]any{"core": id, "names": drifted})
		}
	}
	return out, nil
}

// missingKeys returns the top-level keys of the YAML file want that have
// lacks.
func missingKeys(want, have string) []string {
	w, h := topKeys(want, nil), topKeys(have, nil)
	var out []string
	for _, k := range w {
		if !slices.Contains(h, k) {
			out = append(out, k)
		}
	}
	return out
}

// slotKeys returns the keys of agent.yaml's slots mapping.
func slotKeys(path string) []string { return topKeys(path, []string{"slots"}) }

// topKeys returns the keys of the mapping at under (nil: the top level)
// of the YAML file at path, sorted; nil when it cannot be read.
func topKeys(path string, under []string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var m map[string]any
	if yaml.Unmarshal(data, &m) != nil {
		return nil
	}
	for _, k := range under {
		sub, ok := m[k].(map[string]any)
		if !ok {
			return nil
		}
		m = sub
	}
	return slices.Sorted(maps.Keys(m))
}

func slotIDs(c *core.Core, phase string) []string {
	var ids []string
	for _, s := range c.AllSlots[phase] {
		ids = append(ids, s.ID)
	}
	return ids
}

func toolNames(c *core.Core) []string {
	var names []string
	for _, t := range c.Tools {
		names = append(names, t.Name)
	}
	return names
}

// privatePaths are the parts of a home that must be the owner's alone:
// directories 0700, files 0600.
func privatePaths(h Home) (dirs, files []string) {
	dirs = []string{h.Dir, h.RuntimeDir(), h.LogsDir(), h.AgentsDir(), h.ArtifactsDir()}
	files = []string{h.ConfigPath(), h.EnvPath(), h.DBPath(), h.DBPath() + "-wal", h.DBPath() + "-shm", filepath.Join(h.LogsDir(), "host.log")}
	return dirs, files
}

// checkPermissions reports runtime.permissions.insecure for every private
// path that others may use (group or world bits), and with repair first
// takes those bits away (chmod only: no content is touched, a symbolic
// link is never followed).
func checkPermissions(h Home, repair bool, rep *DoctorReport) {
	if runtime.GOOS == "windows" {
		return
	}
	dirs, files := privatePaths(h)
	var issues []map[string]any
	for i, p := range append(dirs, files...) {
		st, err := os.Lstat(p)
		if err != nil || st.Mode()&fs.ModeSymlink != 0 {
			continue
		}
		perm := st.Mode().Perm()
		if perm&0o077 == 0 {
			continue
		}
		want := os.FileMode(0o600)
		if i < len(dirs) {
			want = 0o700
		}
		if repair {
			if err := os.Chmod(p, perm&^0o077|want&0o700); err == nil {
				rep.Repaired = append(rep.Repaired, fmt.Sprintf("%s: %04o -> %04o", p, perm, perm&^0o077|want&0o700))
				continue
			}
		}
		issues = append(issues, map[string]any{"path": p, "mode": fmt.Sprintf("%04o", perm), "want": fmt.Sprintf("%04o", want)})
	}
	if len(issues) == 0 {
		rep.pass()
		return
	}
	paths := make([]string, 0, len(issues))
	for _, is := range issues {
		paths = append(paths, is["path"].(string))
	}
	rep.add(DoctorFinding{Severity: "error", Code: "runtime.permissions.insecure",
		Message:     "others may read or change " + strings.Join(paths, ", "),
		Remediation: "run `demiurge doctor --repair` (it tightens the modes and changes no content)",
		Details:     map[string]any{"paths": issues}})
}

// checkProviderEnv reports provider.env_missing for the default provider
// and every profile config.yaml configures whose key is not available.
func checkProviderEnv(cfg Config, getenv func(string) string, rep *DoctorReport) {
	ids := slices.Collect(maps.Keys(cfg.Providers.Builtin))
	ids = append(ids, slices.Collect(maps.Keys(cfg.Providers.Custom))...)
	if d := provider.NormalizeID(cfg.Providers.Default); d != "" && d != "auto" && d != provider.FakeID && !slices.Contains(ids, d) {
		ids = append(ids, d)
	}
	slices.Sort(ids)
	found := false
	for _, id := range ids {
		var names []string
		inline := false
		if p, ok := provider.LookupPreset(id); ok {
			names = p.KeyEnv
		} else if c, ok := cfg.Providers.Custom[id]; ok {
			if c.APIKeyEnv != "" {
				names = []string{c.APIKeyEnv}
			}
			inline = strings.TrimSpace(c.APIKey) != ""
		} else {
			continue // an unknown default is host_config.invalid's
		}
		if inline || slices.ContainsFunc(names, func(n string) bool { return strings.TrimSpace(getenv(n)) != "" }) {
			continue
		}
		found = true
		want := "providers.custom." + id + ".api_key_env"
		if len(names) > 0 {
			want = strings.Join(names, " or ")
		}
		rep.add(DoctorFinding{Severity: "warning", Code: "provider.env_missing",
			Message:     fmt.Sprintf("provider %s has no key: %s is not set", id, want),
			Remediation: "run `demiurge setup providers add " + id + " --api-key KEY --write-env`, or export the variable",
			Details:     map[string]any{"provider": id, "api_key_env": names}})
	}
	if !found {
		rep.pass()
	}
}

// loadDoctorEnv reads the home's .env for the doctor: a file others may
// read is reported by checkPermissions (and read anyway, as the owner's
// own file), a bad line is runtime.env.invalid.
func loadDoctorEnv(h Home, getenv func(string) string, rep *DoctorReport) func(string) string {
	f, err := envfile.Load(h.EnvPath())
	if err != nil {
		st, lerr := os.Lstat(h.EnvPath())
		if lerr == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o077 != 0 {
			// Read the values despite the mode: the permission finding
			// says what to do, the key checks stay meaningful.
			if data, rerr := os.ReadFile(h.EnvPath()); rerr == nil {
				if vals, perr := envfile.Parse(data); perr == nil {
					return envfile.Layer(getenv, &envfile.File{Path: h.EnvPath(), Exists: true, Values: vals})
				}
			}
		}
		rep.fail("runtime.env.invalid", err, "fix "+h.EnvPath()+" (KEY=value lines, mode 0600, not a symbolic link)")
		return getenv
	}
	rep.pass()
	return envfile.Layer(getenv, f)
}
