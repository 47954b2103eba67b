package demiurge_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
)

// eventTypeConstants returns the value of every Ev* constant of the root
// package, read from its source so that a new constant without a payload
// struct is seen.
func eventTypeConstants(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "Ev") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: event type constant %s is not a string literal", name, id.Name)
					}
					v, _ := strconv.Unquote(lit.Value)
					out[id.Name] = v
				}
			}
		}
	}
	return out
}

func TestEveryEventTypeHasOnePayloadStruct(t *testing.T) {
	consts := eventTypeConstants(t)
	if len(consts) < 50 {
		t.Fatalf("found %d event type constants; the parser missed some", len(consts))
	}
	byType := map[string]reflect.Type{}
	for _, p := range demiurge.EventPayloads() {
		typ := p.Type()
		if prev, dup := byType[typ]; dup {
			t.Errorf("event type %s has two payload structs: %v and %T", typ, prev, p)
		}
		byType[typ] = reflect.TypeOf(p)
	}
	for name, typ := range consts {
		if _, ok := byType[typ]; !ok {
			t.Errorf("event type %s (%s) has no payload struct in EventPayloads", typ, name)
		}
	}
	values := slices.Collect(maps.Values(consts))
	for typ, rt := range byType {
		if !slices.Contains(values, typ) {
			t.Errorf("payload %v names event type %s, which has no Ev constant", rt, typ)
		}
	}
}

// TestPayloadFieldsAreTagged keeps every key of every payload explicit:
// a field without a json tag would be stored under its Go name.
func TestPayloadFieldsAreTagged(t *testing.T) {
	var check func(owner string, rt reflect.Type)
	check = func(owner string, rt reflect.Type) {
		for rt.Kind() == reflect.Pointer || rt.Kind() == reflect.Slice {
			rt = rt.Elem()
		}
		if rt.Kind() != reflect.Struct || rt.PkgPath() != reflect.TypeFor[demiurge.Event]().PkgPath() {
			return
		}
		for f := range rt.Fields() {
			if !f.IsExported() {
				t.Errorf("%s.%s: payload fields are exported and tagged", owner, f.Name)
				continue
			}
			if f.Anonymous {
				check(owner, f.Type)
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				t.Errorf("%s.%s has no json key", owner, f.Name)
			}
			check(owner+"."+f.Name, f.Type)
		}
	}
	for _, p := range demiurge.EventPayloads() {
		rt := reflect.TypeOf(p)
		if rt.Kind() != reflect.Struct {
			t.Errorf("%v: a payload is a struct", rt)
			continue
		}
		check(rt.Name(), rt)
	}
}

func TestNewEventAndDecode(t *testing.T) {
	in := demiurge.TaskChange{Summary: "done <ok> & well", Error: &demiurge.ErrorInfo{Message: "m"}}
	p, err := in.As(demiurge.EvTaskFailed)
	if err != nil {
		t.Fatal(err)
	}
	ev := demiurge.NewEvent(demiurge.AggTask, "task_1", p)
	if ev.Type != demiurge.EvTaskFailed || ev.AggregateType != demiurge.AggTask || ev.AggregateID != "task_1" || ev.EncodeErr() != nil ||
		!reflect.DeepEqual(ev.Body(), p) {
		t.Fatalf("event = %+v", ev)
	}
	if got, want := string(ev.Payload), `{"summary":"done <ok> & well","error":{"message":"m"}}`; got != want {
		t.Fatalf("payload = %s, want %s", got, want)
	}
	out, err := demiurge.DecodePayload[demiurge.TaskFailedPayload](ev)
	if err != nil || !reflect.DeepEqual(demiurge.TaskChange(out), in) {
		t.Fatalf("decoded %+v, %v; want %+v", out, err, in)
	}
	var change demiurge.TaskChange
	if err := ev.Decode(&change); err != nil || change.Summary != in.Summary {
		t.Fatalf("Decode = %+v, %v", change, err)
	}
	if _, err := demiurge.DecodePayload[demiurge.TaskSucceededPayload](ev); demiurge.ErrorCode(err) != demiurge.EINVALID {
		t.Fatalf("decode as another type: %v, want EINVALID", err)
	}
	if _, err := in.As(demiurge.EvTurnFailed); demiurge.ErrorCode(err) != demiurge.EINVALID {
		t.Fatalf("As outside the family: %v, want EINVALID", err)
	}
	bad := demiurge.NewEvent(demiurge.AggTask, "task_1", demiurge.TaskSucceededPayload{Metadata: map[string]any{"x": math.NaN()}})
	if demiurge.ErrorCode(bad.EncodeErr()) != demiurge.EINVALID || bad.Payload != nil {
		t.Fatalf("unencodable payload: %v %s", bad.EncodeErr(), bad.Payload)
	}
	var empty demiurge.Event
	if err := empty.Decode(&change); err != nil || empty.Body() != nil {
		t.Fatalf("empty payload: %v", err)
	}
}

// TestLegacySpellings: rows written by earlier builds keep their meaning.
func TestLegacySpellings(t *testing.T) {
	call, err := demiurge.DecodePayload[demiurge.ToolCallStartedPayload](demiurge.Event{
		Type: demiurge.EvToolCallStarted, Payload: []byte(`{"turn_id":"t","name":"read_file"}`)})
	if err != nil || call.ToolName != "read_file" {
		t.Fatalf("tool call with name: %+v %v", call, err)
	}
	call, _ = demiurge.DecodePayload[demiurge.ToolCallStartedPayload](demiurge.Event{
		Type: demiurge.EvToolCallStarted, Payload: []byte(`{"tool_name":"a","name":"b"}`)})
	if call.ToolName != "a" {
		t.Fatalf("tool_name wins over name: %q", call.ToolName)
	}
	msg, err := demiurge.DecodePayload[demiurge.MessagePersistedPayload](demiurge.Event{
		Type: demiurge.EvMessagePersisted, Payload: []byte(`{"session_id":"s","visibility":"hidden","text":"hi"}`)})
	if err != nil || msg.Visible == nil || *msg.Visible || msg.Content == nil || msg.Content.Text != "hi" {
		t.Fatalf("legacy message: %+v %v", msg, err)
	}
	msg, _ = demiurge.DecodePayload[demiurge.MessagePersistedPayload](demiurge.Event{
		Type: demiurge.EvMessagePersisted, Payload: []byte(`{"visible":true,"visibility":"hidden","content":{"text":"c"},"text":"t"}`)})
	if !*msg.Visible || msg.Content.Text != "c" {
		t.Fatalf("the current spellings win: %+v", msg)
	}
	upd, err := demiurge.DecodePayload[demiurge.MessageUpdatedPayload](demiurge.Event{
		Type: demiurge.EvMessageUpdated, Payload: []byte(`{"visibility":"visible"}`)})
	if err != nil || upd.Visible == nil || !*upd.Visible {
		t.Fatalf("legacy message update: %+v %v", upd, err)
	}
}
