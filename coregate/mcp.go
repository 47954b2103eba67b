package coregate

import (
	"fmt"
	"maps"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/coretree"
	"github.com/demiurge/demiurge/internal/yamlx"
	"github.com/demiurge/demiurge/redact"
)

// mcpRoot returns the core-relative MCP declarations root of a manifest
// (slots.mcp, default <surface_root>/mcp).
func mcpRoot(m *core.Manifest) string {
	if m == nil {
		return "agent/mcp"
	}
	if m.Slots.MCP != "" {
		return path.Clean(m.Slots.MCP)
	}
	surface := m.Runtime.SurfaceRoot
	if surface == "" {
		surface = "agent"
	}
	return path.Join(path.Clean(surface), "mcp")
}

// mcpDecls maps server id to declaration path for one core of a tree:
// <core>/<root>/<id>.yaml|.yml, first by file name when two share a stem.
func mcpDecls(t coretree.Tree, coreID string, m *core.Manifest) map[string]string {
	prefix := coreID + "/" + mcpRoot(m) + "/"
	out := map[string]string{}
	for _, p := range slices.Sorted(maps.Keys(t)) {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok || strings.Contains(rest, "/") {
			continue
		}
		var id string
		switch {
		case strings.HasSuffix(rest, ".yaml"):
			id = strings.TrimSuffix(rest, ".yaml")
		case strings.HasSuffix(rest, ".yml"):
			id = strings.TrimSuffix(rest, ".yml")
		default:
			continue
		}
		if _, dup := out[id]; !dup && id != "" {
			out[id] = p
		}
	}
	return out
}

// MCPSummary is the secret-safe description of one MCP declaration: names
// of environment variables and headers, never
// their values; arguments and URLs with credentials redacted; the Host
// variables the declaration's values reference, by name.
type MCPSummary struct {
	ServerID                       string   `json:"server_id"`
	Path                           string   `json:"path"`
	Enabled                        bool     `json:"enabled"`
	Transport                      string   `json:"transport"`
	Risk                           string   `json:"risk"`
	ApprovalPolicy                 string   `json:"approval_policy"`
	EffectiveConnectApprovalPolicy string   `json:"effective_connect_approval_policy"`
	CallCapability                 string   `json:"call_capability"`
	ConnectCapability              string   `json:"connect_capability"`
	Command                        string   `json:"command,omitempty"`
	Args                           []string `json:"args,omitempty"`
	Cwd                            string   `json:"cwd,omitempty"`
	EnvNames                       []string `json:"env_names,omitempty"`
	URL                            string   `json:"url,omitempty"`
	HeaderNames                    []string `json:"header_names,omitempty"`
	// HostVariables are the ${NAME} references of env and header values
	// (and of a URL, which the Host refuses: only env and headers are
	// interpolated), in that order.
	HostVariables []MCPHostVariable `json:"host_variables,omitempty"`
	ParseError    string            `json:"parse_error,omitempty"`
}

// MCPHostVariable is one Host variable a declaration exports: into which
// env variable or header (Field, Key), and whether its name looks like a
// credential, which the core must grant by Grant (secret.bind:<NAME>).
type MCPHostVariable struct {
	Field      string `json:"field"` // env, header or url
	Key        string `json:"key,omitempty"`
	Variable   string `json:"variable"`
	Credential bool   `json:"credential"`
	Grant      string `json:"grant,omitempty"`
}

// String is "env LOG_LEVEL ← ${AWS_SECRET_ACCESS_KEY}", as the connect
// approval and `demiurge mcp list` show it.
func (v MCPHostVariable) String() string {
	if v.Key == "" {
		return v.Field + " ← ${" + v.Variable + "}"
	}
	return v.Field + " " + v.Key + " ← ${" + v.Variable + "}"
}

// hostRef is a ${NAME} reference, the form the MCP runtime interpolates.
var hostRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`) })

// hostVariables lists the references of one field's values, keys sorted,
// each name once per value.
func hostVariables(field string, values map[string]string) []MCPHostVariable {
	var out []MCPHostVariable
	for _, k := range slices.Sorted(maps.Keys(values)) {
		seen := map[string]bool{}
		for _, m := range hostRef().FindAllStringSubmatch(values[k], -1) {
			if seen[m[1]] {
				continue
			}
			seen[m[1]] = true
			v := MCPHostVariable{Field: field, Key: k, Variable: m[1]}
			if redact.CredentialVariable(m[1]) {
				v.Credential, v.Grant = true, "secret.bind:"+m[1]
			}
			out = append(out, v)
		}
	}
	return out
}

// stringValues keeps the string values of a decoded mapping (others are
// not references: the runtime refuses them).
func stringValues(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := make(map[string]string, len(m))
	for k, x := range m {
		if s, ok := x.(string); ok {
			out[k] = s
		}
	}
	return out
}

// MCPChange is one changed MCP declaration.
type MCPChange struct {
	Path   string      `json:"path"`
	Change string      `json:"change"` // added, removed or modified
	Before *MCPSummary `json:"before"`
	After  *MCPSummary `json:"after"`
}

// decodeLoose decodes a YAML mapping under yamlx's safety rules (no
// anchors, aliases or duplicate keys; size limits), keeping every key.
func decodeLoose(name string, data []byte) (map[string]any, error) {
	m := map[string]any{}
	if err := yamlx.DecodeStrict(name, data, &m); err != nil {
		return nil, err
	}
	return m, nil
}

func summarizeMCP(id, p string, data []byte) *MCPSummary {
	s := &MCPSummary{ServerID: id, Path: p, Enabled: true, Transport: "stdio", Risk: "medium", ApprovalPolicy: "prompt",
		CallCapability: "mcp.call:" + id, ConnectCapability: "mcp.connect:" + id}
	m, err := decodeLoose(p, data)
	if err != nil {
		s.ParseError = loadMessage(err)
		s.EffectiveConnectApprovalPolicy = "prompt"
		return s
	}
	str := func(k string) string { v, _ := m[k].(string); return strings.TrimSpace(v) }
	if v, ok := m["enabled"].(bool); ok {
		s.Enabled = v
	}
	if v := str("transport"); v != "" {
		s.Transport = v
	}
	if v := str("risk"); v != "" {
		s.Risk = v
	}
	if v := str("approval_policy"); v != "" {
		s.ApprovalPolicy = v
	}
	if v := str("capability"); v != "" {
		s.CallCapability = v
	}
	s.EffectiveConnectApprovalPolicy = "prompt"
	if policyRank(s.ApprovalPolicy) > 1 {
		s.EffectiveConnectApprovalPolicy = s.ApprovalPolicy
	}
	if s.Transport == "streamable_http" {
		s.URL = urlSummary(str("url"))
		s.HeaderNames = mapKeys(m["headers"])
		s.HostVariables = declaredHostVariables(m)
		return s
	}
	s.Command = redactArgs([]string{str("command")})[0]
	if list, ok := m["args"].([]any); ok {
		args := make([]string, len(list))
		for i, v := range list {
			args[i] = fmt.Sprint(v)
		}
		s.Args = redactArgs(args)
	}
	s.Cwd = str("cwd")
	if s.Cwd == "" {
		s.Cwd = "."
	}
	s.EnvNames = mapKeys(m["env"])
	s.HostVariables = declaredHostVariables(m)
	return s
}

// declaredHostVariables are the references of every field the runtime
// reads them from, whatever the transport: env, headers, then the URL.
func declaredHostVariables(m map[string]any) []MCPHostVariable {
	url, _ := m["url"].(string)
	out := hostVariables("env", stringValues(m["env"]))
	out = append(out, hostVariables("header", stringValues(m["headers"]))...)
	return append(out, hostVariables("url", map[string]string{"": url})...)
}

func mapKeys(v any) []string {
	m, _ := v.(map[string]any)
	return slices.Sorted(maps.Keys(m))
}

// redactArgs hides credentials in command arguments: whatever redaction
// discovery recognises (--token=…, URL passwords, NAME=value, headers),
// and the value following an option whose name is sensitive (--api-key X).
func redactArgs(args []string) []string {
	red := redact.New(redact.Discover(args)...)
	out := make([]string, len(args))
	for i, a := range args {
		if i > 0 && strings.HasPrefix(args[i-1], "-") && redact.SensitiveField(strings.TrimLeft(args[i-1], "-")) && !strings.HasPrefix(a, "-") {
			out[i] = "<redacted>"
			continue
		}
		out[i] = red.String(a, redact.Operator)
	}
	return out
}

// urlSummary keeps scheme, host, port and path, and only the names of
// query parameters; user information is dropped.
func urlSummary(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		if raw == "" {
			return ""
		}
		return "<unparsable url>"
	}
	out := u.Scheme + "://" + u.Host + u.EscapedPath()
	if q := u.Query(); len(q) > 0 {
		out += "?" + strings.Join(slices.Sorted(maps.Keys(q)), "&")
	}
	return out
}
