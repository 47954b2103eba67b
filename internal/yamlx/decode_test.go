package yamlx_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/yamlx"
	"github.com/goccy/go-yaml/ast"
)

type tools struct {
	Toolsets []string                `yaml:"toolsets"`
	Metadata map[string]toolMetadata `yaml:"metadata"`
}

type toolMetadata struct {
	Risk    string `yaml:"risk"`
	Enabled *bool  `yaml:"enabled"`
}

type roots struct {
	Soul  string `yaml:"soul"`
	Tools string `yaml:"tools"`
}

type runtimeSection struct {
	MaxSteps int     `yaml:"max_model_steps"`
	Timeout  float64 `yaml:"timeout"`
}

type manifest struct {
	Version int               `yaml:"schema_version"`
	Tools   tools             `yaml:"tools"`
	Slots   roots             `yaml:"slots" yamlx:"open"`
	Runtime runtimeSection    `yaml:"runtime"`
	Options map[string]any    `yaml:"options"`
	Labels  map[string]string `yaml:"labels"`
}

func TestDecodeStrict(t *testing.T) {
	var m manifest
	src := `schema_version: 1
tools:
  toolsets: [coding, schedule]
  metadata:
    todo: {enabled: false}
slots:
  soul: agent/SOUL.md
  input: agent/input   # not a field: slots is open
runtime:
  max_model_steps: 12
  timeout: 2
options:
  nested: {a: [1, 2], b: null}
`
	if err := yamlx.DecodeStrict("a.yaml", []byte(src), &m); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(m.Tools.Toolsets, ","), "coding,schedule"; got != want {
		t.Fatalf("toolsets=%q, want %q", got, want)
	}
	if e := m.Tools.Metadata["todo"].Enabled; e == nil || *e {
		t.Fatalf("todo.enabled=%v, want false", e)
	}
	if got, want := m.Slots.Soul, "agent/SOUL.md"; got != want {
		t.Fatalf("soul=%q, want %q", got, want)
	}
	if got, want := m.Runtime.MaxSteps, 12; got != want {
		t.Fatalf("max_model_steps=%d, want %d", got, want)
	}
	if got, want := m.Runtime.Timeout, 2.0; got != want {
		t.Fatalf("timeout=%v, want %v", got, want)
	}
	if _, ok := m.Options["nested"].(map[string]any); !ok {
		t.Fatalf("options.nested=%T, want a map", m.Options["nested"])
	}
}

func TestDecodeStrictEmpty(t *testing.T) {
	for _, src := range []string{"", "# only a comment\n", "~\n", "---\n"} {
		m := manifest{Version: 7}
		if err := yamlx.DecodeStrict("a.yaml", []byte(src), &m); err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if m.Version != 7 {
			t.Fatalf("%q: empty document changed the destination", src)
		}
	}
}

func TestDecodeStrictErrors(t *testing.T) {
	long := "k: v\n" + strings.Repeat("#", yamlx.MaxBytes) // 5 bytes over
	for _, tt := range []struct {
		name, src, want string
	}{
		{"unknown key", "schema_version: 1\ntools:\n  toolsets: []\n  toolset: [coding]\n",
			`a.yaml:4: unknown key "toolset" in tools (expected one of: toolsets, metadata)`},
		{"unknown top-level key", "schema_version: 1\n\nbogus: true\n",
			`a.yaml:3: unknown key "bogus" (expected one of: schema_version, tools, slots, runtime, options, labels)`},
		{"unknown key in map value struct", "tools:\n  metadata:\n    todo:\n      risky: high\n",
			`a.yaml:4: unknown key "risky" in tools.metadata.todo (expected one of: risk, enabled)`},
		{"duplicate key", "schema_version: 1\ntools: {}\nschema_version: 2\n",
			`a.yaml:3: duplicate key "schema_version" (first defined at line 1)`},
		{"duplicate key in free-form map", "options:\n  a: 1\n  b:\n    c: 1\n    c: 2\n",
			`a.yaml:5: duplicate key "c" in options.b (first defined at line 4)`},
		{"duplicate key in open struct", "slots:\n  x: 1\n  x: 2\n",
			`a.yaml:3: duplicate key "x" in slots (first defined at line 2)`},
		{"duplicate flow key", "labels: {a: x, a: y}\n",
			`a.yaml:1: duplicate key "a" in labels (first defined at line 1)`},
		{"string for int", "runtime:\n  max_model_steps: \"12\"\n",
			`a.yaml:2: invalid value for runtime.max_model_steps: expected an integer, got a string`},
		{"float for int", "runtime:\n  max_model_steps: 1.5\n",
			`a.yaml:2: invalid value for runtime.max_model_steps: expected an integer, got a number`},
		{"string for bool", "tools:\n  metadata:\n    todo: {enabled: \"no\"}\n",
			`a.yaml:3: invalid value for tools.metadata.todo.enabled: expected a boolean (true or false), got a string`},
		{"scalar for list", "tools:\n  toolsets: coding\n",
			`a.yaml:2: invalid value for tools.toolsets: expected a list, got a string`},
		{"list for mapping", "tools:\n  - coding\n",
			`a.yaml:2: invalid value for tools: expected a mapping, got a list`},
		{"mapping for string", "labels:\n  a:\n    b: c\n",
			`a.yaml:3: invalid value for labels.a: expected a string, got a mapping`},
		{"list item kind", "tools:\n  toolsets:\n    - coding\n    - [x]\n",
			`a.yaml:4: invalid value for tools.toolsets[1]: expected a string, got a list`},
		{"document not a mapping", "- a\n- b\n",
			`a.yaml:1: invalid value for the document: expected a mapping, got a list`},
		{"overflow", "runtime:\n  max_model_steps: 99999999999999999999999\n",
			`a.yaml:2: invalid value for runtime.max_model_steps: 99999999999999999999999 is out of range`},
		{"syntax", "tools: [coding\n",
			`a.yaml:1: invalid YAML: sequence end token ']' not found`},
		{"two documents", "schema_version: 1\n---\nschema_version: 2\n",
			`a.yaml:3: more than one YAML document (a file holds exactly one)`},
		{"anchor", "labels: &l {a: b}\noptions: *l\n",
			`a.yaml:1: YAML anchors and aliases are not supported`},
		{"merge key", "labels:\n  <<: {a: b}\n",
			`a.yaml:2: YAML merge keys (<<) are not supported`},
		{"tag", "labels:\n  a: !!str 1\n",
			`a.yaml:2: YAML tags are not supported (!!str)`},
		{"collection key", "labels:\n  ? [a, b]\n  : c\n",
			`a.yaml:3: invalid YAML: found an invalid key for this map`},
		{"invalid utf-8", "labels:\n  a: \"\xff\"\n",
			`a.yaml:2: file is not valid UTF-8 text`},
		{"too large", long, `a.yaml: file is 262149 bytes; the limit is 262144`},
		{"deep flow", "a: " + strings.Repeat("[", yamlx.MaxDepth+1),
			`a.yaml:1: flow collections nested deeper than 100 levels`},
		{"compact entries", strings.Repeat("- ", yamlx.MaxDepth+1) + "x\n",
			`a.yaml:1: more than 100 nested entries on one line`},
		{"control characters in key", "\"a\\nb\": 1\n",
			`a.yaml:1: unknown key "a\nb" (expected one of: schema_version, tools, slots, runtime, options, labels)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var m manifest
			err := yamlx.DecodeStrict("a.yaml", []byte(tt.src), &m)
			if err == nil {
				t.Fatal("no error")
			}
			if got, want := demiurge.ErrorCode(err), demiurge.ECONFIG; got != want {
				t.Fatalf("code=%q, want %q", got, want)
			}
			if got := demiurge.ErrorMessage(err); got != tt.want {
				t.Fatalf("message:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestKeyErrorCause(t *testing.T) {
	var m manifest
	err := yamlx.DecodeStrict("a.yaml", []byte("tools:\n  toolset: []\n"), &m)
	var ke *yamlx.KeyError
	if !errors.As(err, &ke) {
		t.Fatalf("err=%v, want a *KeyError cause", err)
	}
	if ke.Line != 2 || ke.Parent != "tools" || ke.Key != "toolset" || ke.Duplicate {
		t.Fatalf("KeyError=%+v", ke)
	}
	if got, want := strings.Join(ke.Expected, ","), "toolsets,metadata"; got != want {
		t.Fatalf("Expected=%q, want %q", got, want)
	}
}

func TestManyKeysRejected(t *testing.T) {
	var b strings.Builder
	for i := 0; i <= yamlx.MaxKeys; i++ {
		b.WriteString("k")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(": 1\n")
	}
	_, err := yamlx.Parse("a.yaml", []byte(b.String()))
	if got, want := demiurge.ErrorMessage(err), "a.yaml:10001: more than 10000 mapping keys in one file"; got != want {
		t.Fatalf("message=%q, want %q", got, want)
	}
}

func TestDocumentLine(t *testing.T) {
	src := "a: 1\nb:\n  c:\n    - x\n    - y\n  d: {e: 1}\n"
	d, err := yamlx.Parse("a.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path []string
		want int
	}{
		{nil, 1},
		{[]string{"a"}, 1},
		{[]string{"b"}, 2},
		{[]string{"b", "c"}, 3},
		{[]string{"b", "c", "1"}, 5},
		{[]string{"b", "d", "e"}, 6},
		{[]string{"b", "c", "2"}, 0},
		{[]string{"b", "c", "x"}, 0},
		{[]string{"z"}, 0},
		{[]string{"a", "b"}, 0},
	} {
		if got := d.Line(tt.path...); got != tt.want {
			t.Errorf("Line(%q)=%d, want %d", tt.path, got, tt.want)
		}
	}
	if !d.Has("b", "d") || d.Has("b", "q") || d.Has() {
		t.Fatal("Has disagrees with Line")
	}
	if got, want := d.Errorf(6, "bad %s", "thing").Error(), "a.yaml:6: bad thing"; got != want {
		t.Fatalf("Errorf=%q, want %q", got, want)
	}
	if got, want := yamlx.Errorf("a.yaml", 0, "missing\nthing").Error(), "a.yaml: missing thing"; got != want {
		t.Fatalf("Errorf=%q, want %q", got, want)
	}
}

func TestDecodeTwiceFromOneDocument(t *testing.T) {
	d, err := yamlx.Parse("a.yaml", []byte("slots:\n  soul: s\n  extra: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		var m manifest
		if err := d.Decode(&m); err != nil {
			t.Fatalf("decode %d: %v", i, err)
		}
		var free map[string]any
		if err := d.Decode(&free); err != nil {
			t.Fatalf("decode %d: %v", i, err)
		}
		if _, ok := free["slots"].(map[string]any)["extra"]; !ok {
			t.Fatalf("decode %d: open-struct pruning leaked into the document", i)
		}
	}
}

func TestDecodeNeedsPointer(t *testing.T) {
	var m manifest
	if err := yamlx.DecodeStrict("a.yaml", []byte("a: 1"), m); demiurge.ErrorCode(err) != demiurge.EINTERNAL {
		t.Fatalf("err=%v, want EINTERNAL", err)
	}
}

// picky decodes itself through DecodeNode, choosing its shape from the node.
type picky struct {
	Kind  string
	Value any
}

type pickyA struct {
	Kind string `yaml:"kind"`
	A    int    `yaml:"a"`
}

func (p *picky) UnmarshalYAML(n ast.Node) error {
	var probe map[string]any
	if err := yamlx.DecodeNode(n, "thing", &probe); err != nil {
		return err
	}
	p.Kind, _ = probe["kind"].(string)
	if p.Kind == "a" {
		var a pickyA
		if err := yamlx.DecodeNode(n, "thing", &a); err != nil {
			return err
		}
		p.Value = a
		return nil
	}
	p.Value = probe
	return nil
}

func TestDecodeNodeInCustomUnmarshaler(t *testing.T) {
	type doc struct {
		Thing picky `yaml:"thing"`
	}
	var d doc
	if err := yamlx.DecodeStrict("a.yaml", []byte("thing:\n  kind: b\n  anything: 1\n"), &d); err != nil {
		t.Fatal(err)
	}
	if d.Thing.Kind != "b" {
		t.Fatalf("kind=%q", d.Thing.Kind)
	}
	err := yamlx.DecodeStrict("a.yaml", []byte("\nthing:\n  kind: a\n  b: 1\n"), &d)
	if got, want := demiurge.ErrorMessage(err), `a.yaml:4: unknown key "b" in thing (expected one of: kind, a)`; got != want {
		t.Fatalf("message=%q, want %q", got, want)
	}
}
