package cmdguard

import (
	"reflect"
	"strings"
	"testing"
)

// TestFingerprintGolden pins the fingerprint JSON byte for byte: the values were
// computed independently (Python json.dumps, sort_keys, no spaces, no
// HTML escaping).
func TestFingerprintGolden(t *testing.T) {
	for want, c := range map[string]struct {
		cmd string
		x   Execution
	}{
		"a770e2f6469eca2c": {"ls", Execution{}},
		"dcf4b100aca1503c": {"echo <a> & b", Execution{}},
		"e7cce055f7ab0077": {"make test", Execution{Cwd: "src", Env: map[string]string{"B": "2", "A": "1", "C": "3"}, TimeoutSeconds: 30}},
		"d8d85b352ffa419e": {"x", Execution{Background: true, TimeoutSeconds: 5, SecretBindings: []BindingAudit{{Capability: "c", Source: "env:X", Target: "X"}}}},
	} {
		if got := Fingerprint(c.cmd, c.x); got != want {
			t.Errorf("Fingerprint(%q, %+v) = %s, want %s", c.cmd, c.x, got, want)
		}
	}
	if exactString("ok") != "ok" || exactString("\xff") != "\x00invalid-utf8:ff" {
		t.Error("exactString")
	}
}

func TestInvisibleAndConfusables(t *testing.T) {
	for _, r := range []rune{0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0, 0x200B, 0x202E, 0xFEFF} {
		if !invisible(r) {
			t.Errorf("invisible(%U) = false", r)
		}
	}
	for _, r := range []rune{0x1d, 0x07, 0x7f, 0x85} {
		if !invisible(r) {
			t.Errorf("control %U not invisible", r)
		}
	}
	for _, r := range []rune{'a', ' ', 0x3165, 0x0410, '\t', '\n', '\r'} {
		if invisible(r) {
			t.Errorf("invisible(%U) = true", r)
		}
	}
	if got := foldConfusables("rм\u200b —rf ／"); got != "rm -rf ／" {
		t.Errorf("foldConfusables = %q", got)
	}
	if got := foldConfusables("plain"); got != "plain" {
		t.Errorf("foldConfusables(plain) = %q", got)
	}
}

func TestIsAssignment(t *testing.T) {
	yes := []string{"a=1", "A_1=", "_=x", "a+=1", "a[1]=2", "a[$(x)]=1", "a[x]+=y", "a==b"}
	no := []string{"", "=", "1a=1", "a", "a+", "a[1]", "a[1=2", "a[1]x=2", "-a=1", "a-b=1", "+=1", "a[1]+"}
	for _, s := range yes {
		if !isAssignment(s) {
			t.Errorf("isAssignment(%q) = false", s)
		}
	}
	for _, s := range no {
		if isAssignment(s) {
			t.Errorf("isAssignment(%q) = true", s)
		}
	}
}

func TestBaseName(t *testing.T) {
	for in, want := range map[string]string{"/usr/bin/rm": "rm", "rm": "rm", "dir/": "dir", "": "", "/": "", ".": "", "a/.": "", "./x": "x"} {
		if got := baseName(in); got != want {
			t.Errorf("baseName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSubstituteParams(t *testing.T) {
	vars := map[string]string{"a": "A", "ab": "AB", "_1": "U"}
	for in, want := range map[string]string{
		"$a":        "A",
		"${a}":      "A",
		"x$a-y":     "xA-y",
		"$ab":       "AB",
		"${ab}c":    "ABc",
		"$_1":       "U",
		"$":         "$",
		"$$":        "$$",
		"$1":        "$1",
		"${}":       "${}",
		"${a":       "${a",
		"${a-x}":    "${a-x}",
		"$zz":       "$zz",
		"$a$a":      "AA",
		"${IFS}":    " ",
		"a${IFS}b":  "a b",
		"$a${zz}$a": "A${zz}A",
	} {
		got, changed := substituteParams(in, vars)
		if got != want || changed != (got != in) {
			t.Errorf("substituteParams(%q) = %q, %v; want %q", in, got, changed, want)
		}
	}
}

func TestExpandWordsQuotingRules(t *testing.T) {
	vars := map[string]string{"a": "x y"}
	got := expandWords([]word{
		{text: "{b,c}", quoted: true}, // quoted braces stay
		{text: "$a", quoted: true},    // quoted expansion is one word
		{text: "$a"},                  // unquoted expansion splits
		{text: "${a}{d,e}"},           // expansion first, no brace expansion after it
		{text: "p{q,r}"},
	}, vars)
	want := []string{"{b,c}", "x y", "x", "y", "x", "y{d,e}", "pq", "pr"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("expandWords = %q, want %q", got, want)
	}
}

func TestRecordAssignmentsShapes(t *testing.T) {
	for in, want := range map[string]map[string]string{
		"for x in / /tmp":       {"x": "/ /tmp"},
		"select x in a":         {"x": "a"},
		"for x":                 {},
		"for x of a":            {},
		"declare -x -r a=1 b=2": {"a": "1", "b": "2"},
		"'export' a=1":          {},
		"a=1 b[1]=2 c+=3 d=4":   {"a": "1", "d": "4"},
		"a=1 ls b=2":            {"a": "1"},
		"a=$b b=1":              {"a": "$b", "b": "1"},
		"local a='$x'":          {"a": "$x"},
	} {
		vars := map[string]string{}
		for _, c := range lexCommands(in) {
			recordAssignments(c.words, vars)
		}
		if !reflect.DeepEqual(vars, want) {
			t.Errorf("recordAssignments(%q) = %q, want %q", in, vars, want)
		}
	}
}

func TestBraceExpand(t *testing.T) {
	for in, want := range map[string][]string{
		"a{b,c}d":    {"abd", "acd"},
		"{a,b}{c,d}": {"ac", "ad", "bc", "bd"},
		"{a,{b,c}}":  {"a", "b", "c"},
		"${a,b}":     {"${a,b}"},
		"{a}":        {"{a}"},
		"{a,b":       {"{a,b"},
		"x{}y":       {"x{}y"},
		"{,a}":       {"", "a"},
	} {
		if got := braceExpand(in); !reflect.DeepEqual(got, want) {
			t.Errorf("braceExpand(%q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("x", maxBraceWord) + "{a,b}"
	if got := braceExpand(long); len(got) != 1 || got[0] != long {
		t.Errorf("an over-long word was expanded")
	}
	if got := braceExpand(strings.Repeat("x", maxBraceWord-5) + "{a,b}"); len(got) != 2 {
		t.Errorf("a word within the limit was not expanded: %d", len(got))
	}
	// The cap holds inside nested and sequential expressions alike.
	for _, in := range []string{strings.Repeat("{a,b}", 10), "{" + strings.Repeat("a,", 100) + "b}"} {
		if n := len(braceExpand(in)); n != maxBraceWords {
			t.Errorf("braceExpand produced %d words, want %d", n, maxBraceWords)
		}
	}
}

func TestSkipWrapperAndEffective(t *testing.T) {
	tests := []struct {
		words []string
		idx   int
		name  string
	}{
		{[]string{"rm", "x"}, 0, "rm"},
		{[]string{"A=1", "rm"}, 1, "rm"},
		{[]string{"if", "!", "rm"}, 2, "rm"},
		{[]string{"sudo", "-u", "root", "rm"}, 3, "rm"},
		{[]string{"sudo", "-uroot", "rm"}, 2, "rm"},
		{[]string{"sudo", "-Eu", "root", "rm"}, 3, "rm"},
		{[]string{"sudo", "--user=root", "rm"}, 2, "rm"},
		{[]string{"sudo", "--us", "root", "rm"}, 3, "rm"},
		{[]string{"sudo", "--", "-rm"}, 2, "-rm"},
		{[]string{"sudo", "A=1", "rm"}, 2, "rm"},
		{[]string{"env", "-", "rm"}, 2, "rm"},
		{[]string{"env", "-i", "-u", "X", "rm"}, 4, "rm"},
		{[]string{"nice", "-", "rm"}, 1, "-"},
		{[]string{"time", "+x", "rm"}, 2, "rm"},
		{[]string{"time", "+", "rm"}, 1, "+"},
		{[]string{"nohup", "+x", "rm"}, 1, "+x"},
		{[]string{"timeout", "5", "rm"}, 2, "rm"},
		{[]string{"timeout", "-k", "1", "5", "rm"}, 4, "rm"},
		{[]string{"chroot", "/", "rm"}, 2, "rm"},
		{[]string{"/usr/bin/env", "RM"}, 1, "rm"},
		{[]string{"command", "-v", "rm"}, 0, "command"},
		{[]string{"command", "-V", "rm"}, 0, "command"},
		{[]string{"command", "-p", "rm"}, 2, "rm"},
		{[]string{"sudo"}, 1, ""},
		{[]string{"A=1"}, 1, ""},
	}
	for _, tt := range tests {
		idx, name, _ := hardlineEffective(tt.words)
		if idx != tt.idx || name != tt.name {
			t.Errorf("hardlineEffective(%q) = %d %q, want %d %q", tt.words, idx, name, tt.idx, tt.name)
		}
	}
	_, _, scripts := hardlineEffective([]string{"env", "-S", "a b", "--split-string=c", "-vSd", "x"})
	if want := []string{"a b", "c", "d"}; !reflect.DeepEqual(scripts, want) {
		t.Errorf("env scripts = %q, want %q", scripts, want)
	}
	_, _, scripts = hardlineEffective([]string{"flock", "f", "-c", "s", "x"})
	if want := []string{"s"}; !reflect.DeepEqual(scripts, want) {
		t.Errorf("flock scripts = %q, want %q", scripts, want)
	}
	for _, tt := range []struct {
		words []string
		idx   int
		name  string
	}{
		{[]string{"ls"}, 0, "ls"},
		{[]string{"A=1", "env", "-u", "cat", "B=2", "rm"}, 5, "rm"},
		{[]string{"time", "-o", "out", "ls"}, 3, "ls"},
		{[]string{"command", "-p", "ls"}, 2, "ls"},
		{[]string{"nohup", "ls"}, 0, "nohup"},
		{[]string{"env"}, 1, ""},
	} {
		idx, name := effectiveCommand(tt.words)
		if idx != tt.idx || name != tt.name {
			t.Errorf("effectiveCommand(%q) = %d %q, want %d %q", tt.words, idx, name, tt.idx, tt.name)
		}
	}
	if commandName([]string{"A=1"}) != "<empty>" || commandName([]string{"/bin/ls"}) != "ls" {
		t.Error("commandName")
	}
}

func TestIsBareExecutable(t *testing.T) {
	for w, want := range map[string]bool{"ls": true, "": false, ".": false, "..": false, "./x": false, "a/b": false, `a\b`: false, "...": true, ".x": true} {
		if got := isBareExecutable(w); got != want {
			t.Errorf("isBareExecutable(%q) = %v", w, got)
		}
	}
}

func TestNormalizeGrouping(t *testing.T) {
	for _, tt := range []struct{ in, want []string }{
		{[]string{"(", "{", "!", "rm", "x", "}", ")"}, []string{"rm", "x"}},
		{[]string{"((rm", "x))"}, []string{"rm", "x"}},
		{[]string{"(", "(rm"}, []string{"rm"}},
		{[]string{"((", "rm"}, []string{"rm"}},
		{[]string{"rm", "x)}"}, []string{"rm", "x"}},
		{[]string{"rm", ")}"}, []string{"rm"}},
		{[]string{"rm"}, []string{"rm"}},
		{[]string{"(("}, []string{}},
		{[]string{}, []string{}},
	} {
		got := normalizeGrouping(tt.in)
		if len(got) == 0 && len(tt.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("normalizeGrouping(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// The caller's slice is never rewritten.
	in := []string{"rm", "x)"}
	normalizeGrouping(in)
	if in[1] != "x)" {
		t.Error("normalizeGrouping modified its input")
	}
}
