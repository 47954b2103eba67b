package redact

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
)

func TestValueViews(t *testing.T) {
	sec := Secret{Value: "tok-0123456789", Name: "API_KEY", Source: "field:args.api_key"}
	fp := sec.Fingerprint()
	r := New(sec)
	in := map[string]any{
		"api_key":  "tok-0123456789",                        // secret under a sensitive key
		"password": map[string]any{"a": "b"},                // sensitive key, container
		"token":    "not-a-known-secret",                    // sensitive key, unknown string
		"note":     "uses tok-0123456789 here",              // secret inside another string
		"auth":     "Bearer tok-0123456789",                 // sensitive key, secret inside
		"count":    3,                                       // scalar
		"pin_code": nil,                                     // not sensitive anyway
		"secret":   false,                                   // booleans carry no credential
		"cookie":   "",                                      // nor does the empty string
		"list":     []any{"tok-0123456789", 1.5, nil, true}, // secret in a list
	}
	eventMarker := func(name, source string) map[string]any {
		return map[string]any{"redacted": true, "name": name, "source": source}
	}
	debugMarker := func(name, source, fp string) map[string]any {
		m := eventMarker(name, source)
		m["fingerprint"] = fp
		return m
	}
	base := func(api, pw, tok, note, auth, item any) map[string]any {
		return map[string]any{
			"api_key": api, "password": pw, "token": tok, "note": note, "auth": auth,
			"count": 3, "pin_code": nil, "secret": false, "cookie": "",
			"list": []any{item, 1.5, nil, true},
		}
	}
	tests := []struct {
		view View
		want map[string]any
	}{
		{Model, base("<redacted>", "<redacted>", "<redacted>", "uses <redacted> here", "<redacted>", "<redacted>")},
		{Operator, base("<redacted:API_KEY>", "<redacted:PASSWORD>", "<redacted:TOKEN>",
			"uses <redacted:API_KEY> here", "<redacted:API_KEY>", "<redacted:API_KEY>")},
		{Event, base(eventMarker("API_KEY", "field:args.api_key"), eventMarker("PASSWORD", "field:password"),
			eventMarker("TOKEN", "field:token"), "uses <redacted:API_KEY> here",
			eventMarker("API_KEY", "field:args.api_key"), "<redacted:API_KEY>")},
		{Durable, base(eventMarker("API_KEY", "field:args.api_key"), eventMarker("PASSWORD", "field:password"),
			eventMarker("TOKEN", "field:token"), "uses <redacted:API_KEY> here",
			eventMarker("API_KEY", "field:args.api_key"), "<redacted:API_KEY>")},
		{Debug, base(debugMarker("API_KEY", "field:args.api_key", fp), eventMarker("PASSWORD", "field:password"),
			eventMarker("TOKEN", "field:token"), "uses <redacted:API_KEY:"+fp+"> here",
			debugMarker("API_KEY", "field:args.api_key", fp), "<redacted:API_KEY:"+fp+">")},
	}
	for _, tt := range tests {
		t.Run(tt.view.String(), func(t *testing.T) {
			got, err := r.Value(in, tt.view)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %#v\nwant %#v", got, tt.want)
			}
		})
	}
	if in["api_key"] != "tok-0123456789" {
		t.Fatal("Value modified its input")
	}
}

func TestValueNestedSensitivePath(t *testing.T) {
	got, err := New().Value(map[string]any{"a": []any{map[string]any{"Client-Secret": 12345}}}, Event)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": []any{map[string]any{"Client-Secret": map[string]any{
		"redacted": true, "name": "CLIENT_SECRET", "source": "field:a.0.Client-Secret"}}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}
}

func TestValueIsIdempotent(t *testing.T) {
	in := map[string]any{"password": "pw-0123456789", "msg": "pw-0123456789 used"}
	for _, view := range AllViews() {
		r := New(Discover(in)...)
		once, err := r.Value(in, view)
		if err != nil {
			t.Fatal(err)
		}
		twice, err := New(Discover(once)...).Value(once, view)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(once, twice) {
			t.Errorf("%s: redacting twice changed %#v into %#v", view, once, twice)
		}
	}
}

func TestValueBounds(t *testing.T) {
	r := NewWithOptions(Options{Limits: map[View]Limits{Model: {MaxDepth: 2, MaxItems: 2, MaxStringChars: 5}}})
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"depth", map[string]any{"a": map[string]any{"b": map[string]any{"c": 1}}, "x": []any{1, []any{2}}},
			map[string]any{"a": map[string]any{"b": "<truncated>"}, "x": []any{1, "<truncated>"}}},
		{"scalars are not depth-bound", map[string]any{"a": map[string]any{"b": 1}},
			map[string]any{"a": map[string]any{"b": 1}}},
		{"mapping items", map[string]any{"d": 4, "c": 3, "b": 2, "a": 1},
			map[string]any{"a": 1, "b": 2, "<truncated>": "2 fields"}},
		{"list items", []any{1, 2, 3}, []any{1, 2, "<truncated 1 items>"}},
		{"string", "héllo world", "héllo...[truncated 6 chars]"},
		{"string at the limit", "héllo", "héllo"},
		{"keys are bounded", map[string]any{"abcdefgh": 1}, map[string]any{"abcde...[truncated 3 chars]": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Value(tt.in, Model)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
	// Other views keep their defaults.
	if got := r.Limits(Operator); got != DefaultLimits() {
		t.Errorf("operator limits %+v", got)
	}
	// Depth and breadth never exceed what discovery examines.
	big := NewWithOptions(Options{Limits: map[View]Limits{Debug: {MaxDepth: 100, MaxItems: 1 << 20}}})
	if got := big.Limits(Debug); got.MaxDepth != DiscoverMaxDepth || got.MaxItems != DiscoverMaxItems {
		t.Errorf("limits not clamped: %+v", got)
	}
}

func TestValueDefaultBounds(t *testing.T) {
	deep := any("leaf")
	for range DefaultMaxDepth + 1 {
		deep = []any{deep}
	}
	got, err := New().Value(deep, Operator)
	if err != nil {
		t.Fatal(err)
	}
	for range DefaultMaxDepth {
		l, ok := got.([]any)
		if !ok {
			t.Fatalf("level missing: %#v", got)
		}
		got = l[0]
	}
	if got != "<truncated>" {
		t.Fatalf("level %d = %#v, want <truncated>", DefaultMaxDepth+1, got)
	}
	long := make([]any, DefaultMaxItems+5)
	out, _ := New().Value(long, Operator)
	if l := out.([]any); len(l) != DefaultMaxItems+1 || l[DefaultMaxItems] != "<truncated 5 items>" {
		t.Fatalf("list bound: len %d last %v", len(l), l[len(l)-1])
	}
}

func TestValueKeyCollisions(t *testing.T) {
	r := New(Secret{Value: "secret-key-1", Name: "K", Source: "s"}, Secret{Value: "secret-key-2", Name: "K", Source: "s"})
	in := map[string]any{"a <redacted>": 1, "a secret-key-1": 2, "a secret-key-2": 3, "plain": 4}
	tests := []struct {
		view View
		want map[string]any
	}{
		{Model, map[string]any{"a <redacted>": 1, "a <redacted>#2": 2, "a <redacted>#3": 3, "plain": 4}},
		{Operator, map[string]any{"a <redacted>": 1, "a <redacted:K>": 2, "a <redacted:K>#2": 3, "plain": 4}},
	}
	for _, tt := range tests {
		for range 5 { // map order must not matter
			got, err := r.Value(in, tt.view)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("%s: got %#v, want %#v", tt.view, got, tt.want)
			}
		}
	}
}

type stringer struct{ s string }

func (s stringer) String() string { return s.s }

type panicky struct{}

func (panicky) String() string { panic("boom with tok-0123456789") }

type holder struct{ P panicky }

type codedErr struct{ msg string }

func (e *codedErr) Error() string { return e.msg }

func TestValueGoValues(t *testing.T) {
	r := New(Secret{Value: "tok-0123456789", Name: "T", Source: "s"})
	var nilPtr *struct{ A int }
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"struct", struct{ Tok string }{"tok-0123456789"}, "{<redacted:T>}"},
		{"stringer", stringer{"s=tok-0123456789"}, "s=<redacted:T>"},
		{"error", &codedErr{"bad tok-0123456789"}, "bad <redacted:T>"},
		{"typed map", map[string]string{"k": "tok-0123456789"}, map[string]any{"k": "<redacted:T>"}},
		{"int-keyed map", map[int]bool{7: true}, map[string]any{"7": true}},
		{"typed slice", []string{"a", "tok-0123456789"}, []any{"a", "<redacted:T>"}},
		{"bytes", []byte("x tok-0123456789"), "x <redacted:T>"},
		{"nil pointer", nilPtr, nil},
		{"pointer", &map[string]any{"a": 1}, map[string]any{"a": 1}},
		{"named string", demiString("tok-0123456789"), "<redacted:T>"},
		{"int64", int64(5), int64(5)},
		{"uint", uint(5), uint(5)},
		{"named int", namedInt(5), int64(5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Value(tt.in, Operator)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

type demiString string
type namedInt int

func TestValueRenderingPanics(t *testing.T) {
	for _, in := range []any{
		panicky{},
		map[string]any{"a": []any{panicky{}}},
		holder{}, // fmt recovers the panic and prints it: not trusted either
		map[string]any{"password": map[string]any{"x": panicky{}}}, // replaced, never rendered
	} {
		out, err := New().Value(in, Operator)
		if _, isMap := in.(map[string]any); isMap && strings.Contains(fmt.Sprint(in), "password") {
			if err != nil {
				t.Errorf("value under a sensitive key must not be rendered: %v", err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%T: no error, out %#v", in, out)
			continue
		}
		if out != nil {
			t.Errorf("partial output %#v", out)
		}
		if strings.Contains(err.Error(), "tok-0123456789") {
			t.Errorf("error leaks the panic text: %v", err)
		}
	}
}

func TestValueUnknownView(t *testing.T) {
	if _, err := New().Value("x", View(42)); err == nil {
		t.Fatal("unknown view accepted")
	}
}

func TestRedactValue(t *testing.T) {
	in := map[string]any{"password": "pw-12345678", "log": "login with pw-12345678"}
	got, err := RedactValue(in, Operator)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"password": "<redacted:PASSWORD>", "log": "login with <redacted:PASSWORD>"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}
	// The method form keeps the Redactor's own secrets as well.
	r := New(Secret{Value: "known-1234", Name: "KNOWN", Source: "env:KNOWN"})
	got, err = r.RedactValue(map[string]any{"a": "known-1234 token=fresh-5678"}, Operator)
	if err != nil {
		t.Fatal(err)
	}
	if got.(map[string]any)["a"] != "<redacted:KNOWN> token=<redacted:TOKEN>" {
		t.Fatalf("got %#v", got)
	}
	if len(r.Secrets()) != 1 {
		t.Fatal("RedactValue changed the Redactor")
	}
	// An Authorization value is matched by its credential.
	got, err = RedactValue(map[string]any{
		"Authorization": "Bearer tok-abcdefgh",
		"echo":          "sent tok-abcdefgh",
	}, Event)
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]any{
		"Authorization": map[string]any{"redacted": true, "name": "AUTHORIZATION", "source": "field:Authorization"},
		"echo":          "sent <redacted:AUTHORIZATION>",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}
}

func TestDiscoverIgnoresMarkerText(t *testing.T) {
	in := map[string]any{
		"token":    demiurge.NewSecret("real-value-1"), // renders as <redacted>
		"password": "<redacted:PASSWORD>",
		"secret":   []any{"<redacted>", "<redacted:X:0123456789abcdef>"},
	}
	if got := Discover(in); len(got) != 0 {
		t.Fatalf("markers taken for secrets: %v", got)
	}
	out, err := New().Value(in, Model)
	if err != nil {
		t.Fatal(err)
	}
	if out.(map[string]any)["token"] != "<redacted>" {
		t.Fatalf("typed secret under a sensitive key: %#v", out)
	}
}

func TestRedactorOrderAndDedupe(t *testing.T) {
	r := New(
		Secret{Value: "abcd", Name: "SHORT", Source: "b"},
		Secret{Value: "abcdefgh", Name: "LONG", Source: "b"},
		Secret{Value: "abcdefgh", Name: "LONG", Source: "b"},
		Secret{Value: "abcdefgh", Name: "OTHER", Source: "a"},
		Secret{Value: "", Name: "EMPTY", Source: "a"},
	)
	got := r.Secrets()
	names := []string{}
	for _, s := range got {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "OTHER,LONG,SHORT" {
		t.Fatalf("order %v", names)
	}
	// The first secret of a value names its marker; the longest match wins.
	if s := r.String("xabcdefghx abcd", Operator); s != "x<redacted:OTHER>x <redacted:SHORT>" {
		t.Fatalf("got %q", s)
	}
	r2 := r.With(Secret{Value: "zzzzzz", Name: "Z", Source: "z"})
	if len(r.Secrets()) != 3 || len(r2.Secrets()) != 4 {
		t.Fatal("With is not immutable")
	}
	var nilR *Redactor
	if nilR.String("abcd", Model) != "abcd" || len(nilR.Secrets()) != 0 {
		t.Fatal("nil Redactor")
	}
	if got := nilR.With(Secret{Value: "abcd", Name: "A"}).String("abcd", Debug); !strings.HasPrefix(got, "<redacted:A:") {
		t.Fatalf("got %q", got)
	}
}

func TestErrorsAsUnchanged(t *testing.T) {
	var ce *codedErr
	err := RedactError(fmt.Errorf("wrap: %w", &codedErr{"x"}), nil, Model)
	if !errors.As(err, &ce) {
		t.Fatal("RedactError lost the cause")
	}
}

func TestRedactValueRenderPanic(t *testing.T) {
	if got := Discover(map[string]any{"a": panicky{}, "b": "token=still-found"}); len(got) != 1 {
		t.Fatalf("discovery: %v", got)
	}
	if _, err := RedactValue([]any{panicky{}}, Model); err == nil {
		t.Fatal("no error")
	}
}

func TestRedactorDecidingNameAndNil(t *testing.T) {
	a := Secret{Value: "same-value-1", Name: "ZED", Source: "s"}
	b := Secret{Value: "same-value-1", Name: "ALPHA", Source: "s"}
	for _, order := range [][]Secret{{a, b}, {b, a}} {
		if got := New(order...).String("x same-value-1", Operator); got != "x <redacted:ALPHA>" {
			t.Errorf("got %q", got)
		}
	}
	if got := New(Secret{Value: "", Name: "EMPTY"}).Secrets(); len(got) != 0 {
		t.Errorf("empty value kept: %v", got)
	}
	if got := New().Limits(View(99)); got != DefaultLimits() {
		t.Errorf("unknown view limits %v", got)
	}
	var nilR *Redactor
	if got := nilR.Limits(Model); got != DefaultLimits() {
		t.Errorf("nil limits %v", got)
	}
	out, err := nilR.Value(map[string]any{"password": "abc"}, Durable)
	if err != nil {
		t.Fatal(err)
	}
	if m := out.(map[string]any)["password"].(map[string]any); m["name"] != "PASSWORD" || m["source"] != "field:password" {
		t.Errorf("nil redactor marker %v", m)
	}
	if got := nilR.String("abc", Model); got != "abc" {
		t.Errorf("nil String %q", got)
	}
	if nilR.Secrets() != nil {
		t.Error("nil Secrets")
	}
}

func TestAuthorizationFieldPrefersTheWholeKnownValue(t *testing.T) {
	r := New(Secret{Value: "Custom tok12345", Name: "WHOLE", Source: "a"}, Secret{Value: "tok12345", Name: "PART", Source: "b"})
	out, err := r.Value(map[string]any{"authorization": "Custom tok12345", "proxy_authorization": "Custom tok12345x"}, Operator)
	if err != nil {
		t.Fatal(err)
	}
	m := out.(map[string]any)
	if m["authorization"] != "<redacted:WHOLE>" {
		t.Errorf("authorization: %v", m["authorization"])
	}
	// Neither the value nor its credential is known whole: the first
	// known secret inside it, longest first, names the marker.
	if m["proxy_authorization"] != "<redacted:WHOLE>" {
		t.Errorf("proxy_authorization: %v", m["proxy_authorization"])
	}
	out, _ = r.Value(map[string]any{"authorization": "Bearer tok12345"}, Operator)
	if got := out.(map[string]any)["authorization"]; got != "<redacted:PART>" {
		t.Errorf("credential after a scheme: %v", got)
	}
}

func TestViewNames(t *testing.T) {
	for v, want := range map[View]string{Model: "model", Operator: "operator", Event: "event", Durable: "durable", Debug: "debug", numViews: "view(5)", View(17): "view(17)"} {
		if got := v.String(); got != want {
			t.Errorf("View(%d) = %q, want %q", uint8(v), got, want)
		}
	}
	if numViews.valid() || !Debug.valid() {
		t.Error("valid")
	}
	if _, err := New().Value("x", numViews); err == nil {
		t.Error("view past the last accepted")
	}
	if got := New().Limits(numViews); got != DefaultLimits() {
		t.Errorf("limits of an unknown view %v", got)
	}
}
