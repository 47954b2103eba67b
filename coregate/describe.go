package coregate

import (
	"encoding/json"
	"strings"
)

// isManifestPath reports whether p is an agent.yaml: the global fallback
// or a core's.
func isManifestPath(p string) bool {
	return p == "agent.yaml" || (strings.Count(p, "/") == 1 && strings.HasSuffix(p, "/agent.yaml"))
}

// ManifestChanges flattens the key changes of every changed agent.yaml
// (the global fallback's and the cores'): "<path>: <dotted.key>
// added|removed|changed", for commit messages. Values are never shown.
func (e *Edit) ManifestChanges() []string {
	var out []string
	for _, c := range e.changed {
		if !isManifestPath(c.Path) {
			continue
		}
		oldFlat, newFlat := map[string]string{}, map[string]string{}
		if d, ok, err := e.ReadOld(c.Path); err == nil && ok {
			if m, err := decodeLoose(c.Path, d); err == nil {
				flattenYAML("", m, oldFlat)
			}
		}
		if d, ok, err := e.ReadNew(c.Path); err == nil && ok {
			if m, err := decodeLoose(c.Path, d); err == nil {
				flattenYAML("", m, newFlat)
			}
		}
		for _, k := range unionKeys(oldFlat, newFlat) {
			o, had := oldFlat[k]
			n, has := newFlat[k]
			switch {
			case !had:
				out = append(out, c.Path+": "+k+" added")
			case !has:
				out = append(out, c.Path+": "+k+" removed")
			case o != n:
				out = append(out, c.Path+": "+k+" changed")
			}
		}
	}
	return out
}

// flattenYAML maps dotted key paths to canonical JSON of their leaf values
// (lists and empty mappings are leaves).
func flattenYAML(prefix string, v any, out map[string]string) {
	if m, ok := v.(map[string]any); ok && len(m) > 0 {
		for k, child := range m {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			flattenYAML(key, child, out)
		}
		return
	}
	if prefix == "" {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		data = []byte("?")
	}
	out[prefix] = string(data)
}
