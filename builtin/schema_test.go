package builtin_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/demiurge/demiurge/builtin"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func compileSchema(t *testing.T, schema map[string]any) *jsonschema.Schema {
	t.Helper()
	raw, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://s.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://s.json")
	if err != nil {
		t.Fatalf("schema does not compile: %v", err)
	}
	return s
}

// TestSchemasAreExact: every builtin schema compiles, is closed
// (additionalProperties false) and states its required arguments, types,
// enums and maxima, since the dispatcher validates arguments with it
// before the tool runs.
func TestSchemasAreExact(t *testing.T) {
	schemas := map[string]map[string]any{}
	for _, d := range builtin.Definitions([]string{"coding", "demiurge_control", "schedule"}, builtin.Deps{}) {
		schemas[d.Name] = d.Schema
		if d.Schema["additionalProperties"] != false || d.Schema["type"] != "object" {
			t.Errorf("%s: schema is not a closed object", d.Name)
		}
	}
	for _, tt := range []struct {
		tool  string
		args  string
		valid bool
	}{
		{"read_file", `{"path":"a","offset":0,"limit":20000}`, true},
		{"read_file", `{}`, false},
		{"read_file", `{"path":"a","limit":20001}`, false},
		{"read_file", `{"path":"a","offset":-1}`, false},
		{"read_file", `{"path":"a","extra":1}`, false},
		{"read_file", `{"path":1}`, false},
		{"write_file", `{"path":"a","content":""}`, true},
		{"write_file", `{"path":"a"}`, false},
		{"write_file", `{"path":"a","content":"x","create_parent_dirs":"yes"}`, false},
		{"patch", `{"path":"a","old":"x","new":"y","count":-1}`, true},
		{"patch", `{"path":"a","old":"x"}`, false},
		{"patch", `{"path":"a","old":"x","new":"y","count":1.5}`, false},
		{"search_files", `{}`, true},
		{"search_files", `{"query":"q","target":"both","max_results":200,"case_sensitive":false}`, true},
		{"search_files", `{"query":"q","target":"lines"}`, false},
		{"search_files", `{"query":"q","max_results":201}`, false},
		{"skills_list", `{"category":"ops"}`, true},
		{"skill_view", `{"name":"x","file_path":"references/a.md"}`, true},
		{"skill_view", `{"file_path":"a"}`, false},
		{"skill_manage", `{"action":"patch","name":"x","old_string":"a","new_string":"b","replace_all":true}`, true},
		{"skill_manage", `{"action":"rename","name":"x"}`, false},
		{"skill_manage", `{"name":"x"}`, false},
		{"todo", `{}`, true},
		{"todo", `{"action":"complete","index":2}`, true},
		{"todo", `{"action":"archive"}`, false},
		{"session_search", `{"query":"q","session_id":"s","limit":50}`, true},
		{"session_search", `{"limit":51}`, false},
		{"session_search", `{"limit":0}`, false},
	} {
		schema, ok := schemas[tt.tool]
		if !ok {
			t.Fatalf("%s not defined", tt.tool)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(tt.args)))
		if err != nil {
			t.Fatal(err)
		}
		err = compileSchema(t, schema).Validate(inst)
		if (err == nil) != tt.valid {
			t.Errorf("%s %s: valid=%v (%v), want %v", tt.tool, tt.args, err == nil, err, tt.valid)
		}
	}
}

// TestRegistryMetadata pins the spec's registry metadata for the tools here.
func TestRegistryMetadata(t *testing.T) {
	want := map[string][4]string{ // risk, capability, approval, model output
		"read_file":      {"low", "fs.read", "auto", ""},
		"search_files":   {"low", "fs.read", "auto", ""},
		"write_file":     {"medium", "fs.write", "prompt", ""},
		"patch":          {"medium", "fs.write", "prompt", ""},
		"skills_list":    {"low", "", "auto", "current_turn"},
		"skill_view":     {"low", "", "auto", "current_turn"},
		"skill_manage":   {"medium", "fs.write", "prompt", ""},
		"todo":           {"low", "", "auto", ""},
		"session_search": {"medium", "session.read", "prompt", "current_turn"},
	}
	seen := 0
	for _, d := range builtin.Definitions([]string{"coding"}, builtin.Deps{}) {
		w, ok := want[d.Name]
		if !ok {
			continue
		}
		seen++
		if got := [4]string{d.Risk, d.Capability, d.ApprovalPolicy, d.ModelOutputPolicy}; got != w {
			t.Errorf("%s metadata %v, want %v", d.Name, got, w)
		}
	}
	if seen != len(want) {
		t.Fatalf("found %d of %d tools in the coding toolset", seen, len(want))
	}
}
