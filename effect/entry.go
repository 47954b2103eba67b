package effect

import (
	"cmp"
	"encoding/json"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Entry sources.
const (
	SourceBuiltin  = "builtin"
	SourceAuthored = "authored"
	SourceMCP      = "mcp"
)

// Approval policies, ordered from loosest to strictest.
const (
	ApprovalAuto   = "auto"
	ApprovalPrompt = "prompt"
	ApprovalDeny   = "deny"
)

// Entry is one resolved catalog entry. Entries are built by Definition.Bind
// and never modified afterwards.
type Entry struct {
	Name              string
	Description       string
	Source            string
	CoreID            string
	CoreRevision      string
	AdapterKey        string
	Provenance        string
	SlotPath          string
	Risk              string
	Capability        string
	ApprovalPolicy    string
	ModelOutputPolicy string
	DisplayPolicy     string

	schema  []byte // canonical JSON; copied out on every read
	adapter Adapter
	// validator is compiled once per distinct schema: at Bind for MCP
	// entries; on the first call for builtin and authored ones, whose
	// schemas are the Host's own or were compiled when their core revision
	// was saved (a process that calls no tool compiles none).
	validator func() *jsonschema.Schema
}

// Schema returns a detached copy of the entry's input schema.
func (e *Entry) Schema() map[string]any {
	var m map[string]any
	if err := json.Unmarshal(e.schema, &m); err != nil || m == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return m
}

// ModelMetadata is the entry as tools_list shows it.
func (e *Entry) ModelMetadata() map[string]any {
	return map[string]any{
		"name": e.Name, "description": e.Description, "source": e.Source,
		"core_id": e.CoreID, "core_revision": e.CoreRevision, "provenance": e.Provenance,
		"slot_path": e.SlotPath, "risk": e.Risk, "capability": e.Capability,
		"approval_policy": e.ApprovalPolicy, "model_output_policy": e.ModelOutputPolicy,
		"display_policy": e.DisplayPolicy, "enabled": true,
	}
}

// Invocation is what an adapter receives: the frozen arguments, the call id,
// the catalog the call was bound to (tools_list reads only this one) and the
// turn's identity.
type Invocation struct {
	CallID  string
	Args    map[string]any
	Entry   *Entry
	Catalog *Catalog
	Turn    TurnContext
}

// Outcome is an adapter's result before the runtime derives status and views.
type Outcome struct {
	Content     string
	ModelOutput string // what the model sees when it differs from Content
	// DisplayOutput is what tool cards and line mode show instead of
	// Content when set (an authored ToolResult's display_output); it is
	// redacted as the operator view is.
	DisplayOutput    string
	Data             map[string]any
	IsError          bool
	ExecutionStarted bool
	Terminate        bool
	Denial           string // "approval" | "capability" | "policy" when the adapter refused
}

// Definition describes a tool before it is bound to a turn's core revision.
type Definition struct {
	Name              string
	Description       string
	Schema            map[string]any
	Source            string
	AdapterKey        string
	Provenance        string
	SlotPath          string
	Risk              string
	Capability        string
	ApprovalPolicy    string
	ModelOutputPolicy string
	DisplayPolicy     string
	Adapter           Adapter
}

// Bind returns the immutable entry of d for one core revision.
func (d Definition) Bind(coreID, revision string) (*Entry, error) {
	schema := d.Schema
	if schema == nil {
		schema = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	validator, err := schemaValidator(raw, d.Source != SourceMCP)
	if err != nil {
		return nil, err
	}
	e := &Entry{
		Name: d.Name, Description: d.Description, Source: d.Source,
		CoreID: coreID, CoreRevision: revision,
		AdapterKey: d.AdapterKey, Provenance: d.Provenance, SlotPath: d.SlotPath,
		Risk: cmp.Or(d.Risk, "low"), Capability: d.Capability,
		ApprovalPolicy:    cmp.Or(d.ApprovalPolicy, ApprovalAuto),
		ModelOutputPolicy: cmp.Or(d.ModelOutputPolicy, "content"),
		DisplayPolicy:     cmp.Or(d.DisplayPolicy, "summary"),
		schema:            raw, validator: validator, adapter: d.Adapter,
	}
	e.AdapterKey = cmp.Or(e.AdapterKey, e.Source+":"+e.Name)
	e.Provenance = cmp.Or(e.Provenance, e.AdapterKey)
	return e, nil
}
