package redact

import (
	"slices"
	"strings"
	"testing"
)

// exactRow pins one input to exactly the secrets it yields (NAME=value@
// source, in any order): a scanner that finds more is as wrong as one that
// finds less. Inputs end at every stage of a scanner, so a bound that
// reads one byte too far or stops one byte short shows.
type exactRow struct {
	in   string
	want []string
}

func runExactRows(t *testing.T, rows []exactRow) {
	t.Helper()
	for _, tt := range rows {
		var got []string
		for k := range found(Discover(tt.in)) {
			got = append(got, k)
		}
		slices.Sort(got)
		want := slices.Clone(tt.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("Discover(%q)\n got %q\nwant %q", tt.in, got, want)
		}
	}
}

func TestScanAuthHeaderEdges(t *testing.T) {
	h := func(v string) string { return "AUTHORIZATION=" + v + "@header:value" }
	runExactRows(t, []exactRow{
		// A colon elsewhere, so the scanner runs, and the name at the end.
		{"x: Authorization", nil},
		{"x: Authorization ", nil},
		{`x: "Authorization"`, nil},
		{"x: Authorization: ", nil},
		{"Authorization", nil},
		{"Authorization:", nil},
		{"Authorization: ", nil},
		{`Authorization: "`, nil},
		{"Authorization:\tBearer", nil},
		{"Authorization: Bearer ", nil},
		{"Authorization tok12345", nil},
		{"Authorization: Bearer\ttok12345", []string{h("tok12345")}},
		{"Authorization:Bearer tok12346", []string{h("tok12346")}},
		{"Authorization: 'Bearer tok12347'", []string{h("tok12347")}},
		{`"Authorization" : "tok12348"`, []string{h("tok12348"), "AUTHORIZATION=tok12348@json:value"}},
		{`'authorization'	:tok12349`, []string{h("tok12349")}},
		{"xAuthorization: tok12350", nil},
		{"Proxy-Authorization: Bearer tok12351", []string{h("tok12351")}},
		{"Authorization: tok12352,more", []string{h("tok12352")}},
		{"Authorization: tok12353;more", []string{h("tok12353")}},
		{"Authorization: Custom\tcred1234", []string{h("Custom"), h("cred1234")}},
		{"Authorization: Custom cred1235 third", []string{h("Custom"), h("cred1235")}},
		{"authorization authorization: tok12354", []string{h("tok12354")}},
		{"Authorization: Basic aaaa1111 and Authorization: Bearer bbbb2222", []string{h("aaaa1111"), h("bbbb2222")}},
	})
}

func TestScanSecretHeaderEdges(t *testing.T) {
	h := func(v string) string { return "SECRET_HEADER=" + v + "@header:value" }
	runExactRows(t, []exactRow{
		{":", nil},
		{": value1234", nil},
		{"x-api-key", nil},
		{"x-api-key:", nil},
		{"x-api-key:  ", nil},
		{`x-api-key: "unterminated1`, nil},
		{"x-api-key \t: val12345", []string{h("val12345")}},
		{`"x-api-key":"val12346"`, []string{h("val12346"), "X_API_KEY=val12346@json:value"}},
		{`'X-Api-Key': val12347`, []string{h("val12347")}},
		{"ax-api-key: val12348", nil},
		{"apikey: val12349", []string{h("val12349")}},
		{"x-goog-api-key: val12350", []string{h("val12350")}},
		{"api-key: abcd efgh", []string{h("abcd")}},
		{"x-api-key: val12351,x", []string{h("val12351")}},
		{"x-api-key: one12345\nx-auth-token: two12345", []string{h("one12345"), h("two12345")}},
	})
}

func TestScanJSONFieldEdges(t *testing.T) {
	j := func(name, v string) string { return name + "=" + v + "@json:value" }
	long := strings.Repeat("k", 58) + "_token" // 64 bytes
	runExactRows(t, []exactRow{
		{`"password":`, nil},
		{`"password": `, nil},
		{`"password": "`, nil},
		{`"password":"ab\`, nil},
		{`"password":""`, nil},
		{`:"value1234"`, nil},
		{`"":"value1235"`, nil},
		{`token":"value1236"`, nil},
		{`"my token":"value1237"`, []string{j("MY_TOKEN", "value1237")}},
		{`"toke n":"value1238"`, nil},
		{`{"` + long + `":"value1239"}`, []string{j(strings.ToUpper(long), "value1239")}},
		{`{"k` + long + `":"value1240"}`, nil},
		{`"authorization":"Bearer jwtval123"`, []string{j("AUTHORIZATION", "jwtval123"), "AUTHORIZATION=jwtval123@header:value"}},
		{`"password":"a\\b12345"`, []string{j("PASSWORD", `a\\b12345`), j("PASSWORD", `a\b12345`)}},
		{`"password"	:	"tabbed12"`, []string{j("PASSWORD", "tabbed12")}},
		{`"password" "notacolon"`, nil},
		{`"password":"one12345","secret":"two12345"`, []string{j("PASSWORD", "one12345"), j("SECRET", "two12345")}},
	})
}

func TestScanOptionEdges(t *testing.T) {
	c := func(v string) string { return "COMMAND_SECRET=" + v + "@command:value" }
	runExactRows(t, []exactRow{
		{"--", nil},
		{"--t", nil},
		{"--token", nil},
		{"--token ", nil},
		{"--token=", nil},
		{"--token='", nil},
		{`--token "`, nil},
		{"--token\t\tvalue123", []string{c("value123")}},
		{`--token="ab cd"`, []string{c("ab cd"), "TOKEN=ab cd@assignment:value"}},
		{"--token  --other", nil},
		{"--token=--other", []string{"TOKEN=--other@assignment:value"}},
		{"--token value124'x", []string{c("value124")}},
		{"--my-api-key value125", []string{c("value125")}},
		{"--tokens value126", nil},
		{"x--token value127", []string{c("value127")}},
		{"--token value128 --secret value129", []string{c("value128"), c("value129")}},
		// The search goes on after the whole quoted value, not inside it.
		{`--token "a --secret inner123" --password outer123`, []string{c("a --secret inner123"), c("outer123")}},
		{`--token 'a --secret inner124'`, []string{c("a --secret inner124")}},
		{`--token "" --secret value130`, []string{c("value130")}},
	})
}

func TestScanAssignmentEdges(t *testing.T) {
	a := func(name, v string) string { return name + "=" + v + "@assignment:value" }
	runExactRows(t, []exactRow{
		{"=", nil},
		{"token=", nil},
		{"token= ", nil},
		{"token =  ", nil},
		{"token='", nil},
		{"==", nil},
		{"token==value123", nil},
		{" =value123", nil},
		{"token=\tvalue124", []string{a("TOKEN", "value124")}},
		{".token=value125", []string{a("TOKEN", "value125")}},
		{"token=value126)", []string{a("TOKEN", "value126")}},
		{"token=value127`x", []string{a("TOKEN", "value127")}},
		{"token=value128,x", []string{a("TOKEN", "value128")}},
		{"token=value129>", []string{a("TOKEN", "value129")}},
		{"token='quoted 130'", []string{a("TOKEN", "quoted 130")}},
		{`token="unclosed131 rest`, []string{a("TOKEN", "unclosed131")}},
		{"a token=value132 b secret=value133", []string{a("TOKEN", "value132"), a("SECRET", "value133")}},
		{"authorization=Bearer", nil},
		{"authorization=Bearer ", nil},
		{"authorization=\"Bearer\"", []string{a("AUTHORIZATION", "Bearer")}},
	})
}

func TestScanURLEdges(t *testing.T) {
	p := func(v string) string { return "URL_PASSWORD=" + v + "@url:value.password" }
	runExactRows(t, []exactRow{
		{"://", nil},
		{"https://", nil},
		{"https://@", nil},
		{"https://:@h", nil},
		{"https://user:@h", nil},
		{"https://longusername:@h", []string{"URL_USERINFO=longusername@url:value.username"}},
		{"https://u:pw123456@", []string{p("pw123456")}},
		{"https://u:pw123457@h:8080", []string{p("pw123457")}},
		{"https://h?", nil},
		{"https://h?&&;", nil},
		{"https://h#", nil},
		{"https://h/?token=", nil},
		{"https://h/?=value123", nil},
		// The assignment scanner sees "token=" too, with its own idea of
		// where the value ends.
		{"https://h/?token=a%zz1234", []string{"TOKEN=a%zz1234@url:value.query.token", "TOKEN=a%zz1234@assignment:value"}},
		{"https://h/?tok%en=value124", nil},
		{"https://h/?token=value125.", []string{"TOKEN=value125@url:value.query.token", "TOKEN=value125.@assignment:value"}},
		{"https://h/?token=value126#frag", []string{"TOKEN=value126@url:value.query.token", "TOKEN=value126#frag@assignment:value"}},
		{"https://h/#?token=value127", []string{"TOKEN=value127@url:value.fragment.token", "TOKEN=value127@assignment:value"}},
		{"https://h/?key=value128&code=value129", []string{"KEY=value128@url:value.query.key", "CODE=value129@url:value.query.code"}},
		{"https://h/x y://u:pw123458@h", []string{p("pw123458")}},
		{"https://u:pw123459@h\thttps://v:pw123460@h", []string{p("pw123459"), p("pw123460")}},
		{"<https://u:pw123461@h>", []string{p("pw123461")}},
		{"https://u:pw123462@h/p?next=ftp://w:pw123463@g/", []string{p("pw123462"), p("pw123463")}},
	})
}

func TestAuthSchemeWords(t *testing.T) {
	a := func(v string) string { return "AUTHORIZATION=" + v + "@assignment:value" }
	runExactRows(t, []exactRow{
		{"authorization=9abcdef next1234", []string{a("9abcdef")}},
		{"authorization=my-scheme cred1234", []string{a("my-scheme"), a("cred1234")}},
		{"authorization=my_scheme cred1235", []string{a("my_scheme"), a("cred1235")}},
		{"authorization=v2scheme cred1237", []string{a("v2scheme"), a("cred1237")}},
		{"authorization=ab.cd cred1236", []string{a("ab.cd")}},
		{"authorization=abcd/ cred1238", []string{a("abcd/")}},
	})
	// In a field, the credential follows a scheme word of any kind.
	for in, want := range map[string]string{
		"Custom-v2 cred1239": "cred1239", "x_y cred1240": "cred1240", "a.b cred1241": "a.b cred1241",
		"9ab cred1242": "9ab cred1242", "  Bearer   cred1243  ": "cred1243", "Bearer\tcred1244": "cred1244",
	} {
		got := Discover(map[string]any{"authorization": in})
		if len(got) == 0 || got[0].Value != want {
			t.Errorf("authorization %q: got %v, want %q", in, values(got), want)
		}
	}
}

func TestMarkerTextIsNotASecret(t *testing.T) {
	for _, v := range []string{"<redacted>", "<redacted:TOKEN>", "<redacted:TOKEN:46439e9b76dd3708>"} {
		if got := Discover(map[string]any{"password": v}); len(got) != 0 {
			t.Errorf("%q recorded: %v", v, got)
		}
	}
	// Anything else that merely resembles a marker is a value.
	for _, v := range []string{"some-long-secret>", "<redacted:abcd", "<redacted:a<b>", "<redacted:a>b>", "x<redacted:TOKEN>", "<redacte:TOKEN>", "<redacted>x"} {
		got := Discover(map[string]any{"password": v})
		if len(got) != 1 || got[0].Value != v {
			t.Errorf("%q: got %v", v, values(got))
		}
	}
}

func TestDiscoverDepthBounds(t *testing.T) {
	// Lists count as levels as mappings do.
	list := any([]any{"token=in-depth-12"})
	for range DiscoverMaxDepth - 1 {
		list = []any{list}
	}
	if got := values(Discover(list)); len(got) != 1 {
		t.Fatalf("list at depth %d: %q", DiscoverMaxDepth, got)
	}
	if got := Discover([]any{list}); len(got) != 0 {
		t.Fatalf("list beyond depth: %v", got)
	}
	// So do the levels under a sensitive key.
	under := any("nested-secret-12")
	for range DiscoverMaxDepth - 1 {
		under = map[string]any{"n": under}
	}
	in := map[string]any{"password": under}
	if got := values(Discover(in)); len(got) != 1 || got[0] != "nested-secret-12" {
		t.Fatalf("under a sensitive key at depth %d: %q", DiscoverMaxDepth, got)
	}
	if got := values(Discover(map[string]any{"password": []any{under}})); slices.Contains(got, "nested-secret-12") {
		t.Fatalf("under a sensitive key beyond depth: %q", got)
	}
	// Only the first DiscoverMaxItems keys, in sorted order, are walked.
	m := map[string]any{}
	for i := range DiscoverMaxItems + 1 {
		m[strings.Repeat("k", 1)+string(rune('A'+i/26/26%26))+string(rune('A'+i/26%26))+string(rune('A'+i%26))] = "x"
	}
	m["kAAA"] = "token=first-key-1"
	m["zzzz"] = "token=last-key-12"
	got := values(Discover(m))
	if !slices.Contains(got, "first-key-1") || slices.Contains(got, "last-key-12") {
		t.Fatalf("item bound: %q", got)
	}
}

// TestScannersGoOnAfterAMiss: a candidate that fails does not end the
// search; the next one is still found.
func TestScannersGoOnAfterAMiss(t *testing.T) {
	c := func(v string) string { return "COMMAND_SECRET=" + v + "@command:value" }
	a := func(name, v string) string { return name + "=" + v + "@assignment:value" }
	runExactRows(t, []exactRow{
		{"--x, --token value131", []string{c("value131")}},
		{"--verbose yes --token value133", []string{c("value133")}},
		{"--1 --token value134", []string{c("value134")}},
		{" =x token=value135", []string{a("TOKEN", "value135")}},
		{"name=foo token=value136", []string{a("TOKEN", "value136")}},
		{"a==b token=value137", []string{a("TOKEN", "value137")}},
		{`authorization="Bearer a1234567" token=value138`, []string{a("AUTHORIZATION", "a1234567"), a("TOKEN", "value138")}},
		{"token=value139 authorization=Bearer b1234567", []string{a("TOKEN", "value139"), a("AUTHORIZATION", "b1234567")}},
		{"xAuthorization: a1 Authorization: tok12345", []string{"AUTHORIZATION=tok12345@header:value"}},
		{"Authorization: ;x Authorization: tok12346", []string{"AUTHORIZATION=tok12346@header:value"}},
		{"Authorization x Authorization: tok12347", []string{"AUTHORIZATION=tok12347@header:value"}},
		{"time: 12:00 x-api-key: val12353", []string{"SECRET_HEADER=val12353@header:value"}},
		{"x-api-key: \"open x-api-key: val12354", []string{"SECRET_HEADER=val12354@header:value"}},
		{`a: 1, "password":"pw123456"`, []string{"PASSWORD=pw123456@json:value"}},
		{`x":1, "password":"pw123457"`, []string{"PASSWORD=pw123457@json:value"}},
		{`"user":"ann", "password":"pw123458"`, []string{"PASSWORD=pw123458@json:value"}},
		{`"password":1, "token":"tok12348"`, []string{"TOKEN=tok12348@json:value"}},
		{`"":1, "token":"tok12349"`, []string{"TOKEN=tok12349@json:value"}},
		{"://u:pw123470@h", []string{"URL_PASSWORD=pw123470@url:value.password"}},
		{"https:///a:notpw123@x", nil},
		{"https://h/?flag&token=value140", []string{"TOKEN=value140@url:value.query.token", "TOKEN=value140@assignment:value"}},
		{"https://h/?flag&key=value141", []string{"KEY=value141@url:value.query.key"}},
		{"https://abcdefg:@h/ https://abcdefgh:@h/", []string{"URL_USERINFO=abcdefgh@url:value.username"}},
		{"https://a/?n=https://u:pw123471@h/ and ftp://v:pw123472@g", []string{"URL_PASSWORD=pw123471@url:value.password", "URL_PASSWORD=pw123472@url:value.password"}},
		{"authorization=", nil},
		{"token=&abcdefgh", nil},
		{"token=''abcdefgh", nil},
		{`token=""abcdefgh`, nil},
		{`token="a"abcdefgh`, nil},
	})
}

func TestIndexFold(t *testing.T) {
	for _, tt := range []struct {
		s, sub string
		want   int
	}{
		{"xAUTH", "auth", 1}, {"auth", "auth", 0}, {"aut", "auth", -1}, {"", "auth", -1},
		{"AuThOrIzAtIoN", "authorization", 0}, {"xx authx", "auth", 3},
	} {
		if got := indexFold(tt.s, tt.sub); got != tt.want {
			t.Errorf("indexFold(%q, %q) = %d, want %d", tt.s, tt.sub, got, tt.want)
		}
	}
}
