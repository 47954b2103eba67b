package cmdguard

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestCandidates(t *testing.T) {
	tests := []struct {
		in   string
		want []candidate
	}{
		{"  ls  ", []candidate{{CandidateRaw, "ls"}}},
		{"ls \\\n-la", []candidate{{CandidateRaw, "ls -la"}}},
		{"\x1b[1mls\x1b[0m", []candidate{{CandidateRaw, "\x1b[1mls\x1b[0m"}, {CandidateANSI, "ls"}}},
		{"ｌｓ", []candidate{{CandidateRaw, "ｌｓ"}, {CandidateNormalized, "ls"}}},
		{"r\u200bm", []candidate{{CandidateRaw, "r\u200bm"}, {CandidateNormalized, "rm"}}},
		{"rм —rf", []candidate{{CandidateRaw, "rм —rf"}, {CandidateNormalized, "rm -rf"}}},
		{"\x1b[0m", []candidate{{CandidateRaw, "\x1b[0m"}}},
		{" \t\n", nil},
	}
	for _, tt := range tests {
		if got := candidates(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("candidates(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestReviewReportsDecidingCandidate(t *testing.T) {
	v := Review("\x1b[2Krm -rf /")
	if v.Action != Block {
		t.Fatalf("got %+v", v)
	}
	// The shell would run a command named "\x1b[2Krm" (a prompt); the
	// ANSI-stripped form is what an operator sees, and it blocks.
	if v.Candidate != CandidateANSI {
		t.Fatalf("candidate = %q, want %q", v.Candidate, CandidateANSI)
	}
	if v := Review("rm -rf /"); v.Candidate != CandidateRaw {
		t.Fatalf("candidate = %q, want raw", v.Candidate)
	}
	if v := Review("rм -rf /"); v.Candidate != CandidateNormalized {
		t.Fatalf("candidate = %q, want normalized", v.Candidate)
	}
}

func TestPosixSplit(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  bool
	}{
		{`a b  c`, []string{"a", "b", "c"}, false},
		{`a 'b c' "d e"`, []string{"a", "b c", "d e"}, false},
		{`a '' b`, []string{"a", "", "b"}, false},
		{`x"y"'z'`, []string{"xyz"}, false},
		{`\r\m -rf`, []string{"rm", "-rf"}, false},
		{`"a\"b" "c\d"`, []string{`a"b`, `c\d`}, false},
		{`'a\'`, []string{`a\`}, false},
		{`"open`, nil, true},
		{`'open`, nil, true},
		{`trailing\`, nil, true},
	}
	for _, tt := range tests {
		got, err := posixSplit(tt.in)
		if (err != nil) != tt.err || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("posixSplit(%q) = %q, %v; want %q, err=%v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestSplitShell(t *testing.T) {
	s := splitShell(`ls -l && cat 'a;b' | wc; echo "x|y"`)
	if s.unsupported != "" {
		t.Fatal(s.unsupported)
	}
	wantSeg := []string{"ls -l", "cat 'a;b'", "wc", `echo "x|y"`}
	wantSep := []string{"&&", "|", ";"}
	if !reflect.DeepEqual(s.segments, wantSeg) || !reflect.DeepEqual(s.separators, wantSep) {
		t.Fatalf("segments %q seps %q", s.segments, s.separators)
	}
	for in, reason := range map[string]string{
		"a || b":  "conditional OR",
		"a &":     "background",
		"a\nb":    "multi-line",
		"a <<E":   "heredoc",
		"a $(b)":  "command substitution",
		"a `b`":   "command substitution",
		"a 'open": "unterminated",
	} {
		if got := splitShell(in).unsupported; !strings.HasPrefix(got, reason) {
			t.Errorf("splitShell(%q).unsupported = %q, want %q…", in, got, reason)
		}
	}
}

func TestLexCommands(t *testing.T) {
	cmds := lexCommands(`A=1 sudo "r"m -rf '/' 2>/dev/null && (echo $'\x41\n' >"/dev/sda") | x; y`)
	var got [][]string
	var seps []string
	for _, c := range cmds {
		var ws []string
		for _, w := range c.words {
			ws = append(ws, w.text)
		}
		got = append(got, ws)
		seps = append(seps, c.sep)
	}
	want := [][]string{{"A=1", "sudo", "rm", "-rf", "/"}, {"echo", "A\n"}, {"x"}, {"y"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("words = %q, want %q", got, want)
	}
	if wantSeps := []string{"", "(", "|", ";"}; !reflect.DeepEqual(seps, wantSeps) {
		t.Fatalf("seps = %q, want %q", seps, wantSeps)
	}
	if r := cmds[0].redirects; len(r) != 1 || r[0].op != ">" || r[0].target.text != "/dev/null" {
		t.Fatalf("redirects of first command = %+v", r)
	}
	if r := cmds[1].redirects; len(r) != 1 || r[0].target.text != "/dev/sda" {
		t.Fatalf("redirects of second command = %+v", r)
	}
}

func TestCriticalTarget(t *testing.T) {
	critical := []string{"/", "//", "/.", "/*", "/**", "/etc", "/etc/", "/etc/*", "/usr/..", "/home",
		"/home/*", "~", "~/", "~/*", "~/.*", "~/..", "~root", "$HOME", "$HOME/", "${HOME}", "${HOME}/*",
		"/u*", "/*/*", "/var/./"}
	benign := []string{"", ".", "build", "./x", "/tmp", "/tmp/x", "/etc/passwd", "/home/user", "~/project",
		"$HOME/project", "/usr/local/bin", "../..", "*", "/etc/*.conf"}
	for _, p := range critical {
		if !criticalTarget(p) {
			t.Errorf("criticalTarget(%q) = false", p)
		}
	}
	for _, p := range benign {
		if criticalTarget(p) {
			t.Errorf("criticalTarget(%q) = true", p)
		}
	}
}

func TestAnalyseSed(t *testing.T) {
	tests := []struct {
		script string
		want   sedEffects
	}{
		{"p", sedEffects{}},
		{"1,5p;$=", sedEffects{}},
		{"/a;w/,/b/{p}", sedEffects{}},
		{`s/a\/w/b/g`, sedEffects{}},
		{"s|x|y|gw out", sedEffects{write: true}},
		{"2W out", sedEffects{write: true}},
		{"/x/!r /etc/passwd", sedEffects{read: true}},
		{"0~3e date", sedEffects{exec: true}},
		{"s/x/y/e", sedEffects{exec: true}},
		{"a hello; w not-a-command", sedEffects{}},
		{"k", sedEffects{unreadable: true}},
		{"s/open", sedEffects{unreadable: true}},
	}
	for _, tt := range tests {
		if got := analyseSed(tt.script); got != tt.want {
			t.Errorf("analyseSed(%q) = %+v, want %+v", tt.script, got, tt.want)
		}
	}
}

// TestReviewBoundedWork feeds shapes built to make a naive recursive review
// exponential or unbounded; each must finish quickly and never allow.
func TestReviewBoundedWork(t *testing.T) {
	evalChain := "rm -rf /"
	for range 12 {
		evalChain = `eval "$(echo ` + strings.ReplaceAll(evalChain, `"`, `\"`) + `)" "$(echo x)"`
	}
	inputs := map[string]string{
		"nested $(":       "echo " + strings.Repeat("$(", 5000) + "x" + strings.Repeat(")", 5000),
		"siblings":        strings.Repeat("echo $(a$(b)) ", 5000),
		"brace product":   strings.Repeat("{a,b}", 2000),
		"sh -c tower":     strings.Repeat("sh -c '", 200) + "ls" + strings.Repeat("'", 200),
		"eval chain":      evalChain,
		"var doubling":    "a=xxxxxxxx" + strings.Repeat("; a=$a$a$a$a", 40) + "; echo $a",
		"long line":       strings.Repeat("ls $x ", 40000),
		"backtick storm":  strings.Repeat("`", 50001),
		"unclosed quotes": strings.Repeat(`"'`, 20000),
		"quoted nesting":  "echo \"" + strings.Repeat(`$("`, 100000),
	}
	for name, in := range inputs {
		start := time.Now()
		v := Review(in)
		if d := time.Since(start); testing.Verbose() || d > 5*time.Second {
			t.Logf("%s: %v", name, d)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", name, d)
		}
		if v.Action == Allow {
			t.Errorf("%s: allowed", name)
		}
	}
}

func TestReviewBudgetExhaustionFallsBackToFlattenedText(t *testing.T) {
	// Thousands of distinct substitutions exhaust the budget before the
	// real payload is reached; the flattened reading still finds it.
	var b strings.Builder
	for i := range maxTexts + 10 {
		b.WriteString("echo $(echo ")
		b.WriteString(strings.Repeat("x", i%50+1))
		b.WriteString(") ")
	}
	b.WriteString(`; echo "$(rm -rf /)"`)
	if v := Review(b.String()); v.Action != Block || v.RuleKey != "rm-critical-path" {
		t.Fatalf("got %s %s %q", v.Action, v.RuleKey, v.Reason)
	}
}

func TestReviewConcurrent(t *testing.T) {
	done := make(chan Verdict)
	for range 8 {
		go func() {
			var last Verdict
			for _, c := range reviewCases {
				last = Review(c.cmd)
			}
			done <- last
		}()
	}
	first := <-done
	for range 7 {
		if v := <-done; v != first {
			t.Fatalf("verdicts differ across goroutines: %+v vs %+v", v, first)
		}
	}
}

func TestExpandWords(t *testing.T) {
	vars := map[string]string{"a": "rm -rf", "b": "/"}
	words := []word{
		{text: "$a"},                             // unquoted: split
		{text: "${b}", quoted: true},             // quoted: one word
		{text: "$a", quoted: true, single: true}, // single-quoted: literal
		{text: "x${IFS}y"},
		{text: "$unknown"},
		{text: "r{m,}"},
		{text: "{a}"},
	}
	got := expandWords(words, vars)
	want := []string{"rm", "-rf", "/", "$a", "x", "y", "$unknown", "rm", "r", "{a}"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("expandWords = %q, want %q", got, want)
	}
	if n := len(braceExpand(strings.Repeat("{a,b}", 20))); n != maxBraceWords {
		t.Fatalf("brace expansion produced %d words, want the cap %d", n, maxBraceWords)
	}
}

func TestRecordAssignments(t *testing.T) {
	vars := map[string]string{}
	for _, c := range lexCommands("a=/; export b=$a/etc c='$a'; d=" + strings.Repeat("x", maxVarValue+1)) {
		recordAssignments(c.words, vars)
	}
	want := map[string]string{"a": "/", "b": "//etc", "c": "$a"}
	if !reflect.DeepEqual(vars, want) {
		t.Fatalf("vars = %q, want %q", vars, want)
	}
}
