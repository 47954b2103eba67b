package redact

import (
	"fmt"
	"strings"
	"testing"
)

// discoverRow is one scanner rule pinned from both sides: what must be
// found (NAME=value@source) and what must not be recorded at all.
type discoverRow struct {
	name  string
	in    any
	want  []string // each must be found
	never []string // no secret may have one of these values
}

func runDiscoverRows(t *testing.T, rows []discoverRow) {
	t.Helper()
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			got := Discover(tt.in)
			set := found(got)
			for _, w := range tt.want {
				if !set[w] {
					t.Errorf("missing %q\ngot %v", w, keys(set))
				}
			}
			for _, s := range got {
				for _, n := range tt.never {
					if s.Value == n {
						t.Errorf("unexpected secret %q (%s)", s.Value, s)
					}
				}
				if len(s.Value) < MinSecretLen {
					t.Errorf("short secret %q", s.Value)
				}
			}
		})
	}
}

// TestRedactorLongestFirst: a secret that is a prefix of another must not
// leave the longer one's tail visible, whatever order the secrets come in.
func TestRedactorLongestFirst(t *testing.T) {
	short := Secret{Value: "abcd1234", Name: "SHORT", Source: "a"}
	long := Secret{Value: "abcd1234wxyz", Name: "LONG", Source: "b"}
	for _, order := range [][]Secret{{short, long}, {long, short}} {
		r := New(order...)
		for _, view := range AllViews() {
			got := r.String("k=abcd1234wxyz; j=abcd1234.", view)
			if strings.Contains(got, "wxyz") || strings.Contains(got, "abcd") {
				t.Errorf("%s view: %q", view, got)
			}
		}
		if got := r.String("k=abcd1234wxyz", Operator); got != "k=<redacted:LONG>" {
			t.Errorf("got %q", got)
		}
		if got := r.Secrets(); got[0] != long {
			t.Errorf("deciding order %v", got)
		}
	}
	// Discovered the same way: the password is a prefix of the token.
	out, err := RedactValue("password=abcd1234 token=abcd1234wxyz", Operator)
	if err != nil {
		t.Fatal(err)
	}
	if s := out.(string); strings.Contains(s, "wxyz") {
		t.Errorf("tail visible: %q", s)
	}
}

func TestDiscoverMarkers(t *testing.T) {
	fp := Secret{Value: "x"}.Fingerprint()
	walked := func(name string, m map[string]any) discoverRow {
		return discoverRow{name: name, in: m, want: []string{"TOKEN=abcdefgh9@assignment:source"}}
	}
	runDiscoverRows(t, []discoverRow{
		{
			name:  "a real marker is skipped",
			in:    map[string]any{"redacted": true, "name": "TOKEN", "source": "token=abcdefgh9"},
			never: []string{"abcdefgh9"},
		},
		{
			name:  "a real debug marker is skipped",
			in:    map[string]any{"redacted": true, "name": "TOKEN", "source": "token=abcdefgh9", "fingerprint": fp},
			never: []string{"abcdefgh9"},
		},
		{
			name: "name, source and a password is data",
			in:   map[string]any{"name": "db", "source": "config.ini", "password": "hunter22x"},
			want: []string{"PASSWORD=hunter22x@field:password"},
		},
		{
			name: "a marker with a password added is data",
			in:   map[string]any{"redacted": true, "name": "db", "source": "s", "password": "hunter22y"},
			want: []string{"PASSWORD=hunter22y@field:password"},
		},
		walked("redacted false", map[string]any{"redacted": false, "name": "n", "source": "token=abcdefgh9"}),
		walked("redacted as a string", map[string]any{"redacted": "true", "name": "n", "source": "token=abcdefgh9"}),
		walked("no redacted key", map[string]any{"x": true, "name": "n", "source": "token=abcdefgh9"}),
		walked("name not a string", map[string]any{"redacted": true, "name": 1, "source": "token=abcdefgh9"}),
		walked("no name key", map[string]any{"redacted": true, "nom": "n", "source": "token=abcdefgh9"}),
		{name: "source not a string", in: map[string]any{"redacted": true, "name": "n", "source": 2, "x": "token=abcdefgh9"}, want: []string{"TOKEN=abcdefgh9@assignment:x"}},
		walked("two keys", map[string]any{"redacted": true, "source": "token=abcdefgh9"}),
		walked("five keys", map[string]any{"redacted": true, "name": "n", "source": "token=abcdefgh9", "fingerprint": fp, "x": 1}),
		walked("fingerprint not hex", map[string]any{"redacted": true, "name": "n", "source": "token=abcdefgh9", "fingerprint": "0123456789abcdeg"}),
		walked("fingerprint upper case", map[string]any{"redacted": true, "name": "n", "source": "token=abcdefgh9", "fingerprint": "0123456789ABCDEF"}),
		walked("fingerprint too short", map[string]any{"redacted": true, "name": "n", "source": "token=abcdefgh9", "fingerprint": fp[:15]}),
		walked("fingerprint too long", map[string]any{"redacted": true, "name": "n", "source": "token=abcdefgh9", "fingerprint": fp + "0"}),
		walked("fingerprint not a string", map[string]any{"redacted": true, "name": "n", "source": "token=abcdefgh9", "fingerprint": 7}),
		walked("a fourth key that is not the fingerprint", map[string]any{"redacted": true, "name": "n", "source": "token=abcdefgh9", "print": fp}),
	})
	for _, c := range []string{"0123456789abcdef", fp} {
		if !isFingerprint(c) {
			t.Errorf("isFingerprint(%q) = false", c)
		}
	}
	for _, c := range []string{"", "0123456789abcde/", "0123456789abcde:", "0123456789abcde`", "0123456789abcdeG"} {
		if isFingerprint(c) {
			t.Errorf("isFingerprint(%q) = true", c)
		}
	}
}

func TestDiscoverAuthorization(t *testing.T) {
	runDiscoverRows(t, []discoverRow{
		{
			name: "header with an unknown scheme records the credential",
			in:   "Authorization: Custom s3cr3t",
			want: []string{"AUTHORIZATION=s3cr3t@header:value"},
		},
		{
			name:  "header with a known scheme records the credential only",
			in:    "authorization: Bearer tokvalue1",
			want:  []string{"AUTHORIZATION=tokvalue1@header:value"},
			never: []string{"Bearer"},
		},
		{
			name: "quoted header name, quoted value",
			in:   `"Authorization": "Custom s3cr3t-json"`,
			want: []string{"AUTHORIZATION=s3cr3t-json@header:value"},
		},
		{
			name: "field with an unknown scheme",
			in:   map[string]any{"Authorization": "Custom s3cr3t"},
			want: []string{"AUTHORIZATION=s3cr3t@field:Authorization"},
		},
		{
			name:  "assignment with an unknown scheme records both words",
			in:    "authorization=Custom s3cr3t-asg",
			want:  []string{"AUTHORIZATION=s3cr3t-asg@assignment:value", "AUTHORIZATION=Custom@assignment:value"},
			never: []string{},
		},
		{
			name:  "assignment with a known scheme records the credential only",
			in:    "authorization=Basic dXNlcjpwYXNz",
			want:  []string{"AUTHORIZATION=dXNlcjpwYXNz@assignment:value"},
			never: []string{"Basic"},
		},
		{
			name:  "quoted assignment with an unknown scheme",
			in:    `authorization="Custom s3cr3t-q"`,
			want:  []string{"AUTHORIZATION=s3cr3t-q@assignment:value"},
			never: []string{"Custom"},
		},
		{
			name:  "an unknown first word and the next are both recorded",
			in:    "authorization=rawcred99 andmore1 rest",
			want:  []string{"AUTHORIZATION=rawcred99@assignment:value", "AUTHORIZATION=andmore1@assignment:value"},
			never: []string{"rest"},
		},
		{
			name:  "an assignment after it is not a credential",
			in:    "authorization=rawcred98 other=thing12",
			want:  []string{"AUTHORIZATION=rawcred98@assignment:value"},
			never: []string{"other=thing12"},
		},
		{
			name: "a base64 credential ending in padding is one",
			in:   "authorization=Custom dXNlcjpwYXM=",
			want: []string{"AUTHORIZATION=dXNlcjpwYXM=@assignment:value"},
		},
		{
			name:  "the next word is on the same line only",
			in:    "authorization=rawcred97\nnextline",
			want:  []string{"AUTHORIZATION=rawcred97@assignment:value"},
			never: []string{"nextline"},
		},
		{
			name:  "a scheme word that is not a word is the credential",
			in:    "authorization=9abc/def1 next",
			want:  []string{"AUTHORIZATION=9abc/def1@assignment:value"},
			never: []string{"next"},
		},
		{
			name: "proxy authorization assignment",
			in:   "proxy_authorization=Bearer pxytoken1",
			want: []string{"PROXY_AUTHORIZATION=pxytoken1@assignment:value"},
		},
	})
}

func TestDiscoverUpperCaseNames(t *testing.T) {
	runDiscoverRows(t, []discoverRow{
		{name: "field AUTHORIZATION", in: map[string]any{"AUTHORIZATION": "Bearer UPPERtok1"}, want: []string{"AUTHORIZATION=UPPERtok1@field:AUTHORIZATION"}, never: []string{"Bearer UPPERtok1"}},
		{name: "field PASSWORD", in: map[string]any{"PASSWORD": "UPPERpw12"}, want: []string{"PASSWORD=UPPERpw12@field:PASSWORD"}},
		{name: "header AUTHORIZATION", in: "AUTHORIZATION: Bearer UPPERtok2", want: []string{"AUTHORIZATION=UPPERtok2@header:value"}},
		{name: "assignment PASSWORD", in: "PASSWORD=UPPERpw34", want: []string{"PASSWORD=UPPERpw34@assignment:value"}},
		{name: "assignment AUTHORIZATION", in: "AUTHORIZATION=Bearer UPPERtok3", want: []string{"AUTHORIZATION=UPPERtok3@assignment:value"}},
		{name: "JSON PASSWORD", in: `{"PASSWORD":"UPPERpw56"}`, want: []string{"PASSWORD=UPPERpw56@json:value"}},
		{name: "JSON AUTHORIZATION", in: `{"AUTHORIZATION":"Bearer UPPERtok4"}`, want: []string{"AUTHORIZATION=UPPERtok4@json:value"}, never: []string{"Bearer UPPERtok4"}},
		{name: "option PASSWORD", in: "login --PASSWORD UPPERpw78", want: []string{"COMMAND_SECRET=UPPERpw78@command:value"}},
		{name: "header X-API-KEY", in: "X-API-KEY: UPPERkey9", want: []string{"SECRET_HEADER=UPPERkey9@header:value"}},
		{name: "query ACCESS_TOKEN", in: "HTTPS://h/x?ACCESS_TOKEN=UPPERat12", want: []string{"ACCESS_TOKEN=UPPERat12@url:value.query.access_token"}},
	})
}

func TestDiscoverOptions(t *testing.T) {
	runDiscoverRows(t, []discoverRow{
		{name: "space form with underscores", in: "gh auth --github_token ghp_under1234", want: []string{"COMMAND_SECRET=ghp_under1234@command:value"}},
		{name: "at position 0, space form", in: "--password hunter22x", want: []string{"COMMAND_SECRET=hunter22x@command:value"}},
		{name: "at position 0, = form", in: "--password=hunter22y", want: []string{"COMMAND_SECRET=hunter22y@command:value"}},
		{name: "tab separated", in: "x --api_key\tkeyvalue1", want: []string{"COMMAND_SECRET=keyvalue1@command:value"}},
		{name: "several blanks", in: "x --token   tokvalue2", want: []string{"COMMAND_SECRET=tokvalue2@command:value"}},
		{name: "single-quoted value", in: "x --secret 'two words'", want: []string{"COMMAND_SECRET=two words@command:value"}},
		{name: "unclosed quote is not a value", in: "x --secret 'two words", never: []string{"two words", "'two"}},
		{name: "quote closed on the next line is not a value", in: "x --secret 'two\nwords'", never: []string{"two\nwords"}},
		{name: "a following option is not a value", in: "x --password --verbose", never: []string{"--verbose"}},
		{name: "option name must start with a letter", in: "x --1password value1234", never: []string{"value1234"}},
		{name: "option glued to its name", in: "x --passwordvalue1234", never: []string{"value1234"}},
		{name: "value ends at a quote", in: `x --token=tokvalue3"rest`, want: []string{"COMMAND_SECRET=tokvalue3@command:value"}},
		{name: "two options", in: "--token tokvalue4 --password pwvalue45", want: []string{"COMMAND_SECRET=tokvalue4@command:value", "COMMAND_SECRET=pwvalue45@command:value"}},
		{name: "not sensitive", in: "--name valuename1", never: []string{"valuename1"}},
		{name: "a bare double dash", in: "x -- --token tokvalue5", want: []string{"COMMAND_SECRET=tokvalue5@command:value"}},
		{name: "empty = value", in: "x --token=\n next12345", never: []string{"next12345"}},
	})
}

func TestDiscoverJSONFields(t *testing.T) {
	runDiscoverRows(t, []discoverRow{
		{name: "a value with a space is whole", in: `{"password":"correct horse"}`, want: []string{"PASSWORD=correct horse@json:value"}, never: []string{"correct", "horse"}},
		{name: "blanks around the colon", in: `{"password" :  "correct horse battery"}`, want: []string{"PASSWORD=correct horse battery@json:value"}},
		{name: "escaped quote", in: `{"token":"ab\"cd1234"}`, want: []string{`TOKEN=ab\"cd1234@json:value`, `TOKEN=ab"cd1234@json:value`}},
		{name: "value on the next line is not taken", in: "{\"password\":\n\"next line1\"}", never: []string{"next line1"}},
		{name: "unterminated", in: `{"password":"open ended`, never: []string{"open ended"}},
		{name: "newline inside the string ends it", in: "{\"password\":\"line one\nline two\"}", never: []string{"line one\nline two", "line one"}},
		{name: "empty value", in: `{"password":"", "x": "notsecret1"}`, never: []string{"notsecret1", `, `}},
		{name: "not sensitive", in: `{"user":"ann-smith"}`, never: []string{"ann-smith"}},
		{name: "unquoted key", in: `{password:"value1234"}`, never: []string{"value1234"}},
		{name: "value not a string", in: `{"password": 12345678}`, never: []string{"12345678"}},
		{name: "key with a dot and a space", in: `{"db password":"dbpw1234", "db.token":"dbtok123"}`, want: []string{"DB_PASSWORD=dbpw1234@json:value", "DB_TOKEN=dbtok123@json:value"}},
		{name: "key at the start of the text has no opening quote", in: `password":"nopen123"`, never: []string{"nopen123"}},
	})
}

func TestDiscoverURLSchemes(t *testing.T) {
	runDiscoverRows(t, []discoverRow{
		{name: "postgres", in: "postgres://admin:pass@db/app", want: []string{"URL_PASSWORD=pass@url:value.password"}, never: []string{"admin"}},
		{name: "redis, no user", in: "redis://:redispw1@cache:6379/0", want: []string{"URL_PASSWORD=redispw1@url:value.password"}},
		{name: "amqp", in: "amqp://guest:amqppw12@mq:5672/", want: []string{"URL_PASSWORD=amqppw12@url:value.password"}},
		{name: "mongodb+srv", in: "MONGO=mongodb+srv://user:mongopw1@cluster0.x.net/db?retryWrites=true", want: []string{"URL_PASSWORD=mongopw1@url:value.password"}},
		{name: "mysql", in: "mysql://root:mysqlpw1@localhost:3306/db", want: []string{"URL_PASSWORD=mysqlpw1@url:value.password"}},
		{name: "jdbc", in: "jdbc:postgresql://u:jdbcpw12@h/db", want: []string{"URL_PASSWORD=jdbcpw12@url:value.password"}},
		{name: "git+ssh", in: "git+ssh://deploy:gitsshpw@h/repo", want: []string{"URL_PASSWORD=gitsshpw@url:value.password"}},
		{name: "in parentheses", in: "(postgres://a:parenpw1@h)", want: []string{"URL_PASSWORD=parenpw1@url:value.password"}},
		{name: "glued to a word", in: "xhttps://u:gluedpw1@h/", want: []string{"URL_PASSWORD=gluedpw1@url:value.password"}},
		{name: "nested in a query", in: "https://a/?next=https://u:nestedpw@h/?key=nestkey12", want: []string{"URL_PASSWORD=nestedpw@url:value.password", "KEY=nestkey12@url:value.query.key"}},
		{name: "two URLs", in: "a ftp://u:first123@h b sftp://v:second12@h", want: []string{"URL_PASSWORD=first123@url:value.password", "URL_PASSWORD=second12@url:value.password"}},
		{name: "password with @", in: "redis://u:p@ss@word1@h/", want: []string{"URL_PASSWORD=p@ss@word1@url:value.password"}},
		{name: "long user name without password", in: "https://ghp_abcdefgh@h/", want: []string{"URL_USERINFO=ghp_abcdefgh@url:value.username"}},
		{name: "seven-character user is not a secret", in: "https://abcdefg@h/", never: []string{"abcdefg"}},
		{name: "eight-character user is", in: "https://abcdefgh@h/", want: []string{"URL_USERINFO=abcdefgh@url:value.username"}},
		{name: "at sign in the path is not userinfo", in: "https://h/a:notapw12@x", never: []string{"notapw12"}},
		{name: "at sign in the query is not userinfo", in: "https://h?a:notapw13@x", never: []string{"notapw13"}},
		{name: "ends at a quote", in: `"https://u:quotedpw@h"x`, want: []string{"URL_PASSWORD=quotedpw@url:value.password"}},
		{name: "trailing punctuation", in: "see https://h/x?token=trailtok1).", want: []string{"TOKEN=trailtok1@url:value.query.token"}},
		{name: "fragment", in: "https://h/#access_token=fragtok12&x=1", want: []string{"ACCESS_TOKEN=fragtok12@url:value.fragment.access_token"}},
		{name: "percent-encoded key", in: "https://h/?api%5Fkey=enckey123", want: []string{"API_KEY=enckey123@url:value.query.api_key"}},
		{name: "parameter without value", in: "https://h/?token&x=novalue12", never: []string{"novalue12"}},
		{name: "ordinary parameter", in: "https://h/?page=pagevalue", never: []string{"pagevalue"}},
		{name: "semicolon separator", in: "https://h/?a=1;session=sessval12", want: []string{"SESSION=sessval12@url:value.query.session"}},
		{name: "encoded password, raw and decoded", in: "postgres://u:p%2Fw%40rd1@h/", want: []string{"URL_PASSWORD=p%2Fw%40rd1@url:value.password", "URL_PASSWORD=p/w@rd1@url:value.password"}},
	})
}

func TestDiscoverAssignments(t *testing.T) {
	runDiscoverRows(t, []discoverRow{
		{name: "comparison is not an assignment", in: "if password == expected1:", never: []string{"= expected1:", "expected1:"}},
		{name: "blanks around =", in: "PASSWORD \t=\t spacedpw1", want: []string{"PASSWORD=spacedpw1@assignment:value"}},
		{name: "no name", in: "= orphanval1", never: []string{"orphanval1"}},
		{name: "value stops at &", in: "token=amptok12&x=1", want: []string{"TOKEN=amptok12@assignment:value"}},
		{name: "value stops at ;", in: "token=semitok1;x", want: []string{"TOKEN=semitok1@assignment:value"}},
		{name: "unclosed quote keeps the rest of the word", in: `token="unclosed12 more`, want: []string{"TOKEN=unclosed12@assignment:value"}},
		{name: "single quotes", in: "token='sq token1'", want: []string{"TOKEN=sq token1@assignment:value"}},
		{name: "dotted name", in: "spring.datasource.password=dotpw123", want: []string{"SPRING_DATASOURCE_PASSWORD=dotpw123@assignment:value"}},
		{name: "dashed name", in: "api-key=dashkey12", want: []string{"API_KEY=dashkey12@assignment:value"}},
		{name: "suffix name", in: "MY_SERVICE_SECRET_KEY=sfxkey123", want: []string{"MY_SERVICE_SECRET_KEY=sfxkey123@assignment:value"}},
		{name: "at the start", in: "secret=startsec1", want: []string{"SECRET=startsec1@assignment:value"}},
		{name: "value at the end", in: "x token=", never: []string{""}},
		{name: "short value", in: "token=abc", never: []string{"abc"}},
		{name: "four characters", in: "token=abcd", want: []string{"TOKEN=abcd@assignment:value"}},
	})
}

func TestDiscoverSecretHeaders(t *testing.T) {
	runDiscoverRows(t, []discoverRow{
		{name: "api-key", in: "api-key: apikeyval1", want: []string{"SECRET_HEADER=apikeyval1@header:value"}},
		{name: "x-access-token quoted", in: `'x-access-token': 'xat value1'`, want: []string{"SECRET_HEADER=xat value1@header:value"}},
		{name: "no blank after the colon", in: "x-api-token:xapitok12", want: []string{"SECRET_HEADER=xapitok12@header:value"}},
		{name: "a longer header name", in: "my-x-api-key: notheader1", never: []string{"notheader1"}},
		{name: "a different header", in: "x-request-id: requestid1", never: []string{"requestid1"}},
		{name: "value stops at ;", in: "x-auth-token: authtok12; path=/", want: []string{"SECRET_HEADER=authtok12@header:value"}},
	})
}

func TestDiscoverOrderIsSorted(t *testing.T) {
	in := map[string]any{"zeta_token": "zzzz1111", "alpha_token": "aaaa1111", "mid": map[string]any{"password": "mmmm1111"}}
	for range 20 {
		got := Discover(in)
		if len(got) != 3 || got[0].Value != "aaaa1111" || got[1].Value != "mmmm1111" || got[2].Value != "zzzz1111" {
			t.Fatalf("order %v", values(got))
		}
	}
	// A mapping of exactly DiscoverMaxItems keys is walked whole.
	m := map[string]any{}
	for i := range DiscoverMaxItems {
		m[fmt.Sprintf("k%03d", i)] = "x"
	}
	m["k499"] = "token=last-of-500"
	if got := values(Discover(m)); len(got) != 1 || got[0] != "last-of-500" {
		t.Fatalf("500 keys: %q", got)
	}
}

// TestDiscoverSourcesOfParameters: a parameter's name comes from the text
// and may hold a value found elsewhere; the fixed words never change.
func TestDiscoverSourcesOfParameters(t *testing.T) {
	for _, s := range Discover("://y#0000000!token=0000 and postgres://u:pass@h/") {
		if strings.Contains(s.Source, "0000") {
			t.Errorf("source %q holds a secret", s.Source)
		}
		if s.Value == "pass" && s.Source != "url:value.password" {
			t.Errorf("fixed part changed: %q", s.Source)
		}
	}
}
