package core

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/yamlx"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// toolFile is tool.yaml; its keys are exactly these.
type toolFile struct {
	Entrypoint        string         `yaml:"entrypoint"`
	Description       string         `yaml:"description"`
	InputSchema       map[string]any `yaml:"input_schema"`
	Risk              string         `yaml:"risk"`
	Capability        string         `yaml:"capability"`
	ApprovalPolicy    string         `yaml:"approval_policy"`
	DisplayPolicy     string         `yaml:"display_policy"`
	ModelOutputPolicy string         `yaml:"model_output_policy"`
	Capabilities      []string       `yaml:"capabilities"`
}

// loadTools discovers <slots.tools>/<name>/tool.yaml, sorted by name, and
// rejects tools whose name is taken by a slot or a selected builtin.
func (l *loader) loadTools(doc *yamlx.Document, c *Core) error {
	configured := c.Manifest.Slots.Tools
	if configured == "" {
		return nil
	}
	root, problem := l.resolve(configured)
	if problem != "" {
		return doc.Errorf(doc.Line("slots", "tools"), "invalid slots.tools %q: %s", configured, problem)
	}
	if ok, err := isDir(root); err != nil {
		return doc.Errorf(doc.Line("slots", "tools"), "slots.tools %q is not a directory", configured)
	} else if !ok {
		return nil
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return l.readErr(root, err)
	}
	slotIDs := map[string]string{}
	for _, phase := range Phases {
		for _, s := range c.AllSlots[phase] {
			slotIDs[s.ID] = s.RelPath
		}
	}
	builtins := map[string]bool{}
	for _, name := range c.Builtins {
		builtins[name] = true
	}
	for _, e := range entries {
		name := e.Name()
		dir := filepath.Join(root, name)
		manifest := filepath.Join(dir, "tool.yaml")
		if strings.HasPrefix(name, ".") {
			continue
		}
		if ok, _ := isDir(dir); !ok {
			continue
		}
		if _, err := os.Lstat(manifest); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if !ValidID(name) {
			return demiurge.Errorf(demiurge.ECONFIG, "%s: invalid tool name %s: use letters, digits, '_' and '-' (at most 64)", l.show(manifest), quoteShort(name))
		}
		rel := l.rel(dir)
		if prior, dup := slotIDs[name]; dup {
			return demiurge.Errorf(demiurge.ECONFIG, "%s: duplicate slot id %s: %s, %s", l.show(manifest), name, prior, rel)
		}
		if builtins[name] {
			return demiurge.Errorf(demiurge.ECONFIG, "%s: tool name collision: %s; builtin:%s conflicts with authored:%s; rename the authored tool or remove the conflicting builtin toolset", l.show(manifest), name, name, rel)
		}
		t, err := l.loadTool(name, dir, manifest)
		if err != nil {
			return err
		}
		c.Tools = append(c.Tools, t)
	}
	sort.Slice(c.Tools, func(i, j int) bool { return c.Tools[i].Name < c.Tools[j].Name })
	return nil
}

// loadTool reads one tool.yaml and resolves its entrypoint.
func (l *loader) loadTool(name, dir, manifest string) (AuthoredTool, error) {
	doc, err := l.parseComponent(manifest)
	if err != nil {
		return AuthoredTool{}, err
	}
	var f toolFile
	if err := doc.Decode(&f); err != nil {
		return AuthoredTool{}, componentKeyError(doc, "tool.yaml", l.rel(manifest), err)
	}
	t := AuthoredTool{
		Name:              name,
		Dir:               dir,
		RelPath:           l.rel(dir),
		Description:       strings.TrimSpace(f.Description),
		InputSchema:       f.InputSchema,
		Risk:              cmp.Or(f.Risk, "medium"),
		Capability:        f.Capability,
		ApprovalPolicy:    cmp.Or(f.ApprovalPolicy, "prompt"),
		DisplayPolicy:     cmp.Or(f.DisplayPolicy, "summary"),
		ModelOutputPolicy: cmp.Or(f.ModelOutputPolicy, "content"),
		Capabilities:      f.Capabilities,
	}
	if t.Capabilities == nil {
		t.Capabilities = []string{}
	}
	if !slices.Contains(risks, t.Risk) {
		return AuthoredTool{}, doc.Errorf(doc.Line("risk"), "invalid tool risk: %s (expected one of: %s)", t.Risk, strings.Join(risks, ", "))
	}
	if !slices.Contains(approvalPolicies, t.ApprovalPolicy) {
		return AuthoredTool{}, doc.Errorf(doc.Line("approval_policy"), "invalid approval policy: %s (expected one of: %s)", t.ApprovalPolicy, strings.Join(approvalPolicies, ", "))
	}
	if !validPolicyWord(t.DisplayPolicy) {
		return AuthoredTool{}, doc.Errorf(doc.Line("display_policy"), "invalid display_policy: %s", quoteShort(t.DisplayPolicy))
	}
	if !validPolicyWord(t.ModelOutputPolicy) {
		return AuthoredTool{}, doc.Errorf(doc.Line("model_output_policy"), "invalid model_output_policy: %s", quoteShort(t.ModelOutputPolicy))
	}
	if t.Capability != "" {
		if problem := checkCapability(t.Capability); problem != "" {
			return AuthoredTool{}, doc.Errorf(doc.Line("capability"), "invalid capability: %s", problem)
		}
	}
	if err := checkCapabilityList(doc, t.Capabilities); err != nil {
		return AuthoredTool{}, err
	}
	if len(t.InputSchema) == 0 {
		t.InputSchema = map[string]any{"type": "object", "properties": map[string]any{}}
	} else if problem := checkToolSchema(t.InputSchema, !l.saved); problem != "" {
		return AuthoredTool{}, doc.Errorf(doc.Line("input_schema"), "invalid input_schema: %s", problem)
	}
	t.ModulePath, t.Function, err = l.entrypoint(doc, f.Entrypoint, "module:execute", dir)
	if err != nil {
		return AuthoredTool{}, err
	}
	return t, nil
}

// refuseLoader keeps schema compilation from reading files or the network.
type refuseLoader struct{}

func (refuseLoader) Load(string) (any, error) {
	return nil, errors.New("external schema references are not allowed")
}

// checkToolSchema checks that a tool's input_schema is a JSON Schema for an
// object (what providers require of tool parameters) that compiles, unless
// compile is false. It returns the problem, or "".
func checkToolSchema(schema map[string]any, compile bool) string {
	if t, _ := schema["type"].(string); t != "object" {
		return `the top level must have type: object`
	}
	if !compile {
		return ""
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return "not representable as JSON: " + err.Error()
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err.Error()
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	const url = "mem:///input_schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return yamlx.OneLine(err.Error())
	}
	if _, err := c.Compile(url); err != nil {
		return yamlx.OneLine(strings.ReplaceAll(err.Error(), url, "input_schema"))
	}
	return ""
}
