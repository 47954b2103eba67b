package cmdguard

import (
	"reflect"
	"strings"
	"testing"
)

func TestScanExpansions(t *testing.T) {
	tests := []struct {
		in       string
		key      string
		filename bool
		payloads []string
	}{
		{"ls", "", false, nil},
		{"ls *", "", true, nil},
		{"ls ?", "", true, nil},
		{"ls [a]", "", true, nil},
		{"ls {a,b}", "", true, nil},
		{"ls '*'", "", false, nil},
		{`ls "*"`, "", false, nil},
		{`ls \*`, "", false, nil},
		{"echo $(a)", "command-substitution", false, []string{"a"}},
		{"echo `a`", "command-substitution", false, []string{"a"}},
		{`echo "$(a)"`, "command-substitution", false, []string{"a"}},
		{"echo '$(a)'", "", false, nil},
		{`echo \$(a)`, "", false, nil},
		{"echo <(a)", "process-substitution", false, []string{"a"}},
		{"echo >(a)", "process-substitution", false, []string{"a"}},
		{`echo "<(a)"`, "", false, nil},
		{"echo $((1))", "shell-expansion", false, nil},
		{"echo $[1]", "shell-expansion", false, nil},
		{"echo ${a}", "shell-expansion", true, nil},
		{"echo $a", "shell-expansion", false, nil},
		{"echo $1", "shell-expansion", false, nil},
		{"echo $é", "shell-expansion", false, nil},
		{"echo $ ", "", false, nil},
		{"echo $", "", false, nil},
		{"echo $%", "", false, nil},
		{"echo <(a) $(b)", "command-substitution", false, []string{"a", "b"}},
		{"echo $(b) <(a)", "command-substitution", false, []string{"b", "a"}},
		{"echo $a <(b)", "process-substitution", false, []string{"b"}},
		{"echo $(a", "command-substitution", false, []string{"a"}},
		{"echo `a", "command-substitution", false, []string{"a"}},
		{"echo $(a $(b))", "command-substitution", false, []string{"a $(b)"}},
		{`echo $(a ")" b)`, "command-substitution", false, []string{`a ")" b`}},
		{"echo $(a `)` b)", "command-substitution", false, []string{"a `)` b"}},
		{`echo $(a "$(b)" c)`, "command-substitution", false, []string{`a "$(b)" c`}},
		{`echo $(a "$((1))" c)`, "command-substitution", false, []string{`a "$((1))" c`}},
		{`echo $(a "$(b ")")" c)`, "command-substitution", false, []string{`a "$(b ")")" c`}},
		{"echo <(a)$(b)", "command-substitution", false, []string{"a", "b"}},
		{"echo `a`$(b)", "command-substitution", false, []string{"a", "b"}},
	}
	for _, tt := range tests {
		s := scanExpansions(tt.in)
		if s.ruleKey != tt.key || s.filename != tt.filename || !reflect.DeepEqual(s.payloads, tt.payloads) {
			t.Errorf("scanExpansions(%q) = %q %v %q, want %q %v %q", tt.in, s.ruleKey, s.filename, s.payloads, tt.key, tt.filename, tt.payloads)
		}
	}
}

func TestScanHelpers(t *testing.T) {
	if at("ab", 1) != 'b' || at("ab", 2) != 0 {
		t.Error("at")
	}
	for _, tt := range []struct {
		cmd        string
		from, end  int
		terminated bool
		want       string
	}{
		{"$(ab)", 2, 5, true, "ab"},
		{"$(ab", 2, 4, false, "ab"},
		{"$()", 2, 3, true, ""},
		{"$(", 3, 2, false, ""},
		{"x", 0, 0, true, ""},
	} {
		if got := payload(tt.cmd, tt.from, tt.end, tt.terminated); got != tt.want {
			t.Errorf("payload(%q, %d, %d, %v) = %q, want %q", tt.cmd, tt.from, tt.end, tt.terminated, got, tt.want)
		}
	}
	for s, want := range map[string]bool{"a": true, "Z": true, "0": true, "9": true, "_": true, "*": true, "@": true,
		"#": true, "?": true, "-": true, "$": true, "!": true, `"`: true, "'": true, "é": true, "٣": true,
		"": false, " ": false, "%": false, "/": false, "{": false, "€": false, "`": false} {
		if got := startsParameter("$"+s, 1); got != want {
			t.Errorf("startsParameter(%q) = %v", s, got)
		}
	}
	for in, want := range map[string]int{"`ab`c": 4, "`a\\`b`": 6, "`ab": 3} {
		if got, _ := backtickEnd(in, 0); got != want {
			t.Errorf("backtickEnd(%q) = %d, want %d", in, got, want)
		}
	}
	if _, ok := backtickEnd("`ab", 0); ok {
		t.Error("unterminated backtick reported terminated")
	}
	for in, want := range map[string]int{"$(a)b": 4, "$(a(b))c": 7, "$(a')'b)": 8, `$(a"x)"b)`: 9, "$(a": 3, `$(a\)b)`: 7, `$(a "")b`: 7, `$(a "(b" c)x`: 11, "$(a `b`)c": 8} {
		if got, _ := parenEnd(in, 0); got != want {
			t.Errorf("parenEnd(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestQuoteStep(t *testing.T) {
	var q byte
	steps := []struct {
		c       byte
		next    int
		handled bool
		quote   byte
	}{
		{'a', 0, false, 0},
		{'\'', 1, true, '\''},
		{'"', 1, true, '\''},
		{'\\', 1, true, '\''},
		{'\'', 1, true, 0},
		{'\\', 2, true, 0},
		{'"', 1, true, '"'},
		{'\'', 0, false, '"'},
		{'\\', 2, true, '"'},
		{'"', 1, true, 0},
	}
	for i, s := range steps {
		next, handled := quoteStep(s.c, 0, &q)
		if next != s.next || handled != s.handled || q != s.quote {
			t.Fatalf("step %d (%q): %d %v quote=%q, want %d %v %q", i, s.c, next, handled, q, s.next, s.handled, s.quote)
		}
	}
}

func TestDecodeANSIC(t *testing.T) {
	for in, want := range map[string]string{
		`a'`:                  "a",
		`\x41\x4a'`:           "AJ",
		`\x4g'`:               "\x04g",
		`\xzz'`:               `\xzz`,
		`\u00e9'`:             "é",
		`\U0001F600'`:         "😀",
		`\U7fffffff'`:         "",
		`\101\0'`:             "A\x00",
		`\1018'`:              "A8",
		`\a\b\e\E\f\n\r\t\v'`: "\a\b\x1b\x1b\f\n\r\t\v",
		`\\\'\"\?'`:           `\'"?`,
		`\cA\c`:               "\x01",
		`\q'`:                 `\q`,
		`tail\`:               `tail\`,
		`open`:                "open",
	} {
		got, _ := decodeANSIC(in, 0)
		if got != want {
			t.Errorf("decodeANSIC(%q) = %q, want %q", in, got, want)
		}
	}
	if _, next := decodeANSIC(`ab'cd`, 0); next != 3 {
		t.Errorf("next = %d", next)
	}
	if _, next := decodeANSIC(`ab`, 0); next != 2 {
		t.Errorf("next unterminated = %d", next)
	}
	if !isHex('a') || !isHex('F') || !isHex('9') || isHex('g') || isHex('G') || isHex('/') {
		t.Error("isHex")
	}
}

func TestLexerDetails(t *testing.T) {
	words := func(text string) [][]string {
		var out [][]string
		for _, c := range lexCommands(text) {
			var ws []string
			for _, w := range c.words {
				ws = append(ws, w.text)
			}
			out = append(out, ws)
		}
		return out
	}
	for in, want := range map[string][][]string{
		"a\tb":                   {{"a", "b"}},
		"a\rb":                   {{"a"}, {"b"}},
		"a|b":                    {{"a"}, {"b"}},
		"a|&b":                   {{"a"}, {"b"}},
		"a||b":                   {{"a"}, {"b"}},
		"a&b":                    {{"a"}, {"b"}},
		"a&&b":                   {{"a"}, {"b"}},
		"a&>f b":                 {{"a", "b"}},
		"a&>>f b":                {{"a", "b"}},
		"a 2>f b":                {{"a", "b"}},
		"a x2>f":                 {{"a", "x2"}},
		`a "2">f`:                {{"a", "2"}},
		"a <(b) c":               {{"a", "<(b)", "c"}},
		`a \` + "\nb":            {{"a", "b"}},
		`a\ b`:                   {{"a b"}},
		`a\`:                     {{"a"}},
		`'a b`:                   {{"a b"}},
		`$"a b"`:                 {{"a b"}},
		`"a\$b\"\\\x\` + "\nc\"": {{`a$b"\\xc`}},
		`"a$(b)c"`:               {{"a$(b)c"}},
		`"a${b}c"`:               {{"a${b}c"}},
		"\"a`b`c\"":              {{"a`b`c"}},
		"a${b c}d":               {{"a${b c}d"}},
		"a$(b c)d":               {{"a$(b c)d"}},
		"a`b c`d":                {{"a`b c`d"}},
		"a$ b":                   {{"a$", "b"}},
		`"a$(b "c d")e" f`:       {{`a$(b "c d")e`, "f"}},
		`"a${b:-"c d"}e" f`:      {{`a${b:-"c d"}e`, "f"}},
		"a >; b":                 {{"a"}, {"b"}},
		"é b":                    {{"é", "b"}},
		`\é`:                     {{"é"}},
	} {
		if got := words(in); !reflect.DeepEqual(got, want) {
			t.Errorf("lexCommands(%q) words = %q, want %q", in, got, want)
		}
	}
	// Redirections: operator and target, a dangling operator, quoting.
	c := lexCommands(`a >>"f g" 2>&1 <<<x <`)
	if len(c) != 1 {
		t.Fatalf("commands %+v", c)
	}
	got := []string{}
	for _, r := range c[0].redirects {
		got = append(got, r.op+"|"+r.target.text)
	}
	if want := []string{">>|f g", ">&|1", "<<<|x", "<|"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("redirects %q, want %q", got, want)
	}
	if !c[0].redirects[0].target.quoted || c[0].redirects[2].target.quoted {
		t.Error("redirect target quoting")
	}
	if w := lexCommands(`'a'b`)[0].words[0]; !w.quoted || !w.single {
		t.Errorf("single-quoted word %+v", w)
	}
	if w := lexCommands(`"a"b`)[0].words[0]; !w.quoted || w.single {
		t.Errorf("double-quoted word %+v", w)
	}
	if w := lexCommands(`$'a'`)[0].words[0]; !w.quoted || !w.single {
		t.Errorf("ANSI-C word %+v", w)
	}
	if w := lexCommands(`\a`)[0].words[0]; !w.quoted || w.single {
		t.Errorf("escaped word %+v", w)
	}
	if cs := lexCommands(`> f`); len(cs) != 1 || len(cs[0].words) != 0 || len(cs[0].redirects) != 1 {
		t.Errorf("redirect-only command %+v", cs)
	}
	if cs := lexCommands(" ; ; "); len(cs) != 0 {
		t.Errorf("empty commands kept: %+v", cs)
	}
}

func TestRedirectOps(t *testing.T) {
	for in, want := range map[string]string{"<<<x": "<<<", "<<-x": "<<-", "<<x": "<<", "<>x": "<>", "<&x": "<&",
		">>x": ">>", ">|x": ">|", ">&x": ">&", ">x": ">", "<x": "<"} {
		if got := redirectOp(in); got != want {
			t.Errorf("redirectOp(%q) = %q", in, got)
		}
	}
	for op, want := range map[string]bool{">": true, ">>": true, ">|": true, "&>": true, "&>>": true, "<>": true,
		">&": true, "<": false, "<<": false, "<<<": false, "<&": false} {
		if writesTarget(op) != want {
			t.Errorf("writesTarget(%q) != %v", op, want)
		}
	}
	for s, want := range map[string]bool{"": false, "0": true, "12": true, "1a": false, "a": false, "9": true, "/": false, ":": false} {
		if allDigits(s) != want {
			t.Errorf("allDigits(%q) != %v", s, want)
		}
	}
	for in, want := range map[string]int{"${a}b": 4, "${a{b}}c": 7, "${a'}'}x": 7, `${a"}"}x`: 7, `${a\}}x`: 6,
		`${a"\""}x`: 8, "${a": 3} {
		if got := braceEnd(in, 0); got != want {
			t.Errorf("braceEnd(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestSplitShellDetails(t *testing.T) {
	s := splitShell(`a 'b;c' "d\"|e" f\;g && h`)
	if want := []string{`a 'b;c' "d\"|e" f\;g`, "h"}; !reflect.DeepEqual(s.segments, want) || s.redirection {
		t.Fatalf("segments %q", s.segments)
	}
	if s := splitShell("a > b"); !s.redirection || s.unsupported != "" {
		t.Error("redirection not seen")
	}
	if s := splitShell("a '>' b \\> c"); s.redirection {
		t.Error("quoted redirection seen")
	}
	if s := splitShell("a\rb"); !strings.HasPrefix(s.unsupported, "multi-line") {
		t.Errorf("CR: %q", s.unsupported)
	}
	if s := splitShell("a | b"); !s.hasPipe() {
		t.Error("pipe")
	}
	if s := splitShell("a && b; c"); s.hasPipe() || len(s.separators) != 2 {
		t.Errorf("separators %q", s.separators)
	}
	if s := splitShell(`'a\'`); s.unsupported != "" {
		t.Errorf("single-quoted backslash: %q", s.unsupported)
	}
	if s := splitShell(`"a\"`); s.unsupported == "" {
		t.Error("escaped closing double quote accepted")
	}
}
