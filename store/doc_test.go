package store

import (
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
)

// docKey is one key of the event table: its name, whether it is optional,
// and the keys of its object when the table lists them.
type docKey struct {
	name     string
	optional bool
	object   []docKey // nil when the table gives no {…}
}

// docEntry is one entry of the event table.
type docEntry struct {
	types      []string
	keys       []docKey
	projection string // the text after "→"
}

var docType = regexp.MustCompile(`^[a-z_]+(\.[a-z_]+)+(\|[a-z_]+)*$`)

// readEventTable parses the table of doc.go's "Event payloads and
// projections" section: an entry starts with a tab-indented line whose
// first word is an event type (suffix alternatives after "|"), its keys
// run up to "→", its projection to the next entry.
func readEventTable(t *testing.T) []docEntry {
	t.Helper()
	raw, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	start := strings.Index(text, "// # Event payloads and projections")
	end := strings.Index(text[start+1:], "\n// # ")
	if start < 0 || end < 0 {
		t.Fatal("doc.go has no event table section")
	}
	var entries []docEntry
	var body []string
	flush := func() {
		if len(entries) == 0 {
			return
		}
		e := &entries[len(entries)-1]
		keys, proj, ok := cutOutsideNotes(strings.Join(body, " "), "→")
		if !ok {
			t.Errorf("event table entry %v has no projection (→)", e.types)
		}
		e.keys, e.projection = parseDocKeys(t, e.types, keys), strings.TrimSpace(proj)
		body = nil
	}
	for line := range strings.SplitSeq(text[start:start+1+end], "\n") {
		rest, ok := strings.CutPrefix(line, "//\t")
		if !ok {
			continue
		}
		if word, tail, _ := strings.Cut(rest, " "); rest[0] != ' ' && docType.MatchString(word) {
			flush()
			entries = append(entries, docEntry{types: expandTypes(word)})
			rest = tail
		}
		body = append(body, rest)
	}
	flush()
	return entries
}

// cutOutsideNotes is strings.Cut at the first sep outside parentheses.
func cutOutsideNotes(s, sep string) (before, after string, found bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '(':
			depth++
		case s[i] == ')':
			depth--
		case depth == 0 && strings.HasPrefix(s[i:], sep):
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
}

// expandTypes turns "turn.completed|failed" into its event types.
func expandTypes(word string) []string {
	parts := strings.Split(word, "|")
	prefix := parts[0][:strings.LastIndexByte(parts[0], '.')+1]
	out := []string{parts[0]}
	for _, p := range parts[1:] {
		out = append(out, prefix+p)
	}
	return out
}

// parseDocKeys reads a key list: keys separated by commas, "?" after an
// optional one, "{…}" the keys of an object; "(…)" and quoted text are
// notes. Anything else is an error.
func parseDocKeys(t *testing.T, types []string, s string) []docKey {
	t.Helper()
	pos := 0
	var list func() []docKey
	skipNotes := func() {
		for pos < len(s) {
			switch c := s[pos]; {
			case c == ' ' || c == ',':
				pos++
			case c == '(':
				depth := 0
				for ; pos < len(s); pos++ {
					if s[pos] == '(' {
						depth++
					} else if s[pos] == ')' {
						if depth--; depth == 0 {
							pos++
							break
						}
					}
				}
			default:
				return
			}
		}
	}
	list = func() []docKey {
		var out []docKey
		for {
			skipNotes()
			if pos >= len(s) || s[pos] == '}' {
				return out
			}
			begin := pos
			for pos < len(s) && (s[pos] == '_' || s[pos] >= 'a' && s[pos] <= 'z') {
				pos++
			}
			if begin == pos {
				t.Errorf("event table %v: unexpected %q in the keys", types, s[pos:min(pos+20, len(s))])
				return out
			}
			k := docKey{name: s[begin:pos]}
			if pos < len(s) && s[pos] == '?' {
				k.optional = true
				pos++
			}
			skipNotes()
			if pos < len(s) && s[pos] == '{' {
				pos++
				k.object = list()
				if pos >= len(s) || s[pos] != '}' {
					t.Errorf("event table %v: %s has an unclosed {", types, k.name)
				}
				pos++
				if k.object == nil {
					k.object = []docKey{}
				}
			}
			out = append(out, k)
		}
	}
	keys := list()
	if skipNotes(); pos < len(s) {
		t.Errorf("event table %v: unexpected %q after the keys", types, s[pos:])
	}
	return keys
}

// structKeys lists the JSON keys of a payload struct as the table writes
// them: embedded structs inline, "?" for omitempty, the keys of a nested
// struct of the root package as its object.
func structKeys(rt reflect.Type) []docKey {
	var out []docKey
	for f := range rt.Fields() {
		if f.Anonymous {
			out = append(out, structKeys(f.Type)...)
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		k := docKey{name: name, optional: strings.Contains(opts, "omitempty")}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ft.PkgPath() == rt.PkgPath() {
			k.object = structKeys(ft)
		}
		out = append(out, k)
	}
	return out
}

// TestEventTableMatchesPayloads checks doc.go's event table against the
// payload structs and the registered projections: every event type is in
// the table once, with exactly its struct's keys (and the keys of its
// nested structs), and the table says "event only" exactly where no
// projection is registered.
func TestEventTableMatchesPayloads(t *testing.T) {
	payloads := map[string]reflect.Type{}
	for _, p := range demiurge.EventPayloads() {
		payloads[p.Type()] = reflect.TypeOf(p)
	}
	documented := map[string]bool{}
	for _, e := range readEventTable(t) {
		for _, typ := range e.types {
			rt, ok := payloads[typ]
			switch {
			case !ok:
				t.Errorf("event table: %s has no payload struct", typ)
				continue
			case documented[typ]:
				t.Errorf("event table: %s is listed twice", typ)
			}
			documented[typ] = true
			if want := structKeys(rt); !reflect.DeepEqual(e.keys, want) {
				t.Errorf("event table: %s lists keys\n %v\nthe struct %v has\n %v", typ, e.keys, rt, want)
			}
			_, projected := projectors[typ]
			if eventOnly := strings.HasPrefix(e.projection, "event only"); eventOnly == projected {
				t.Errorf("event table: %s says %q, registered projection: %v", typ, e.projection, projected)
			}
		}
	}
	for typ := range payloads {
		if !documented[typ] {
			t.Errorf("event table: %s is missing", typ)
		}
	}
}

// TestProjectionsDecodeTheirPayloadStruct: each projection decodes the
// payload struct of its own event type, so a key the struct lacks cannot
// be read.
func TestProjectionsDecodeTheirPayloadStruct(t *testing.T) {
	payloads := map[string]reflect.Type{}
	for _, p := range demiurge.EventPayloads() {
		payloads[p.Type()] = reflect.TypeOf(p)
	}
	if len(projectors) < 40 {
		t.Fatalf("%d projections registered", len(projectors))
	}
	for _, typ := range slices.Sorted(maps.Keys(projectors)) {
		if got, want := projectors[typ].payload, payloads[typ]; got != want {
			t.Errorf("projection of %s decodes %v, want %v", typ, got, want)
		}
	}
}
