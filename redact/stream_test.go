package redact

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// naiveReplace is the reference semantics: at each position the longest
// value starting there is replaced, else the byte is copied.
func naiveReplace(s string, repl map[string]string) string {
	vals := make([]string, 0, len(repl))
	for v := range repl {
		if v != "" {
			vals = append(vals, v)
		}
	}
	slices.SortFunc(vals, func(a, b string) int { return len(b) - len(a) })
	var b strings.Builder
	for i := 0; i < len(s); {
		matched := false
		for _, v := range vals {
			if strings.HasPrefix(s[i:], v) {
				b.WriteString(repl[v])
				i += len(v)
				matched = true
				break
			}
		}
		if !matched {
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

var overlapping = map[string]string{
	"abcdef":    "<A>",
	"cdefgh":    "<B>",
	"abc":       "<C>",
	"efg":       "<E>",
	"aaaa":      "<AAAA>",
	"secret-42": "<redacted:S>",
}

const overlapInput = "xxabcdefghxxcdefghxxabcxxefgxxaaaaaaxsecret-42secret-4abcdefg"
const overlapWant = "xx<A>ghxx<B>xx<C>xx<E>xx<AAAA>aax<redacted:S>secret-4<A>g"

func TestReplaceAll(t *testing.T) {
	if got := ReplaceAll(overlapInput, overlapping); got != overlapWant {
		t.Fatalf("got  %q\nwant %q", got, overlapWant)
	}
	if got := naiveReplace(overlapInput, overlapping); got != overlapWant {
		t.Fatalf("reference disagrees: %q", got)
	}
	if got := ReplaceAll("abc", nil); got != "abc" {
		t.Fatal(got)
	}
	if got := ReplaceAll("abc", map[string]string{"": "<x>"}); got != "abc" {
		t.Fatalf("empty key used: %q", got)
	}
	// Replaced text is not searched again.
	if got := ReplaceAll("tokentoken", map[string]string{"token": "token!"}); got != "token!token!" {
		t.Fatalf("got %q", got)
	}
}

func streamChunks(t *testing.T, chunks []string, repl map[string]string) string {
	t.Helper()
	var out bytes.Buffer
	s := NewStream(&out, repl)
	for _, c := range chunks {
		n, err := s.Write([]byte(c))
		if err != nil || n != len(c) {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestStreamEverySplitPoint(t *testing.T) {
	in := overlapInput
	for i := 0; i <= len(in); i++ {
		if got := streamChunks(t, []string{in[:i], in[i:]}, overlapping); got != overlapWant {
			t.Fatalf("split at %d: got %q", i, got)
		}
		for j := i; j <= len(in); j++ {
			if got := streamChunks(t, []string{in[:i], in[i:j], in[j:]}, overlapping); got != overlapWant {
				t.Fatalf("split at %d,%d: got %q", i, j, got)
			}
		}
	}
	bytewise := make([]string, len(in))
	for i := range in {
		bytewise[i] = in[i : i+1]
	}
	if got := streamChunks(t, bytewise, overlapping); got != overlapWant {
		t.Fatalf("byte at a time: got %q", got)
	}
}

func TestStreamHoldsBackLessThanLongestValue(t *testing.T) {
	var out bytes.Buffer
	s := NewStream(&out, map[string]string{"0123456789": "<X>"})
	if _, err := s.Write([]byte("hello world, 01234")); err != nil {
		t.Fatal(err)
	}
	if out.String() != "hello wor" {
		t.Fatalf("forwarded %q, want everything but the last 9 bytes", out.String())
	}
	_, _ = s.Write([]byte("56789 done"))
	_ = s.Close()
	if out.String() != "hello world, <X> done" {
		t.Fatalf("got %q", out.String())
	}
	if _, err := s.Write([]byte("x")); !errors.Is(err, ErrStreamClosed) {
		t.Fatalf("write after close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

func TestStreamNoReplacementsPassesThrough(t *testing.T) {
	var out bytes.Buffer
	s := NewStream(&out, nil)
	_, _ = s.Write([]byte("abc"))
	if out.String() != "abc" {
		t.Fatalf("got %q before Close", out.String())
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n == 0 {
		return 0, errors.New("disk full")
	}
	w.n--
	return len(p), nil
}

func TestStreamWriteErrorIsSticky(t *testing.T) {
	s := NewStream(&failWriter{n: 1}, map[string]string{"ab": "<x>"})
	if _, err := s.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Write([]byte("world")); err == nil || n != 0 {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if _, err := s.Write([]byte("more")); err == nil {
		t.Fatal("error not sticky")
	}
	if err := s.Close(); err == nil {
		t.Fatal("Close hid the error")
	}
}

type shortWriter struct{}

func (shortWriter) Write(p []byte) (int, error) { return len(p) / 2, nil }

func TestStreamShortWrite(t *testing.T) {
	s := NewStream(shortWriter{}, nil)
	if _, err := s.Write([]byte("abcd")); err == nil {
		t.Fatal("short write not reported")
	}
}

func TestStreamConcurrentWrites(t *testing.T) {
	var out bytes.Buffer
	s := NewStream(&out, map[string]string{"secret-value": "<S>"})
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 100 {
				_, _ = s.Write([]byte("secret-value\n"))
			}
		}()
	}
	for range 4 {
		<-done
	}
	_ = s.Close()
	if got := strings.Count(out.String(), "<S>\n"); got != 400 || strings.Contains(out.String(), "secret") {
		t.Fatalf("got %d markers", got)
	}
}

// randomRepl returns up to n values of minLen to maxLen bytes over a small
// alphabet, so that values overlap, share prefixes and occur often.
func randomRepl(r *rand.Rand, n, minLen, maxLen int) map[string]string {
	repl := map[string]string{}
	for i := range n {
		l := minLen + r.IntN(maxLen-minLen+1)
		b := make([]byte, l)
		for j := range b {
			b[j] = "abcd"[r.IntN(4)]
		}
		repl[string(b)] = "<" + strconv.Itoa(i) + ">"
	}
	return repl
}

func randomText(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = "abcde"[r.IntN(5)]
	}
	return string(b)
}

// randomChunks cuts s at random points, empty chunks included.
func randomChunks(r *rand.Rand, s string) []string {
	var out []string
	for len(s) > 0 {
		n := min(len(s), r.IntN(12))
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, "")
}

// TestMatcherAgainstReference compares ReplaceAll and Stream with the
// reference semantics on many random value sets: with short values (every
// position is tried) and long ones (the block index skips), windows of
// every width up to maxWindow and beyond.
func TestMatcherAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, shape := range []struct{ n, minLen, maxLen, text int }{
		{1, 1, 3, 40}, {5, 1, 4, 60}, {8, 2, 6, 80}, {3, 4, 4, 60}, {6, 4, 9, 120},
		{20, 5, 12, 200}, {40, 8, 30, 400}, {10, 60, 70, 600}, {4, 70, 90, 500}, {30, 6, 20, 3000},
	} {
		for range 200 {
			repl := randomRepl(r, shape.n, shape.minLen, shape.maxLen)
			in := randomText(r, r.IntN(shape.text))
			// Plant some values so that long ones occur at all.
			for v := range repl {
				if r.IntN(2) == 0 && len(in) > 0 {
					at := r.IntN(len(in))
					in = in[:at] + v + in[at:]
				}
			}
			want := naiveReplace(in, repl)
			if got := ReplaceAll(in, repl); got != want {
				t.Fatalf("ReplaceAll(%q, %v)\n got %q\nwant %q", in, repl, got, want)
			}
			if got := streamChunks(t, randomChunks(r, in), repl); got != want {
				t.Fatalf("Stream(%q, %v)\n got %q\nwant %q", in, repl, got, want)
			}
		}
	}
}

// TestMatcherWindowEdges pins the positions the block index must not skip:
// a value at the very start and end of the text, and values whose window
// ends with a block that also occurs earlier in another value.
func TestMatcherWindowEdges(t *testing.T) {
	repl := map[string]string{"wxyz1234": "<A>", "zz12wxyz": "<B>", "1234wxyzq": "<C>"}
	for in, want := range map[string]string{
		"wxyz1234":                 "<A>",
		"_wxyz1234":                "_<A>",
		"wxyz123":                  "wxyz123",
		"zz12wxyz1234":             "<B>1234",
		"1234wxyzq wxyz1234 x":     "<C> <A> x",
		"ab1234wxyzzz12wxyz1234wx": "ab1234wxyz<B>1234wx",
	} {
		if got := ReplaceAll(in, repl); got != want {
			t.Errorf("ReplaceAll(%q) = %q, want %q", in, got, want)
		}
		if got := naiveReplace(in, repl); got != want {
			t.Errorf("reference(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMatcherIndex pins how the index is built: blocks from four-byte
// windows on, a full move of win−2 where no block of a value occurs, one
// end entry per value in vals order, a table that grows with the values.
func TestMatcherIndex(t *testing.T) {
	if m := newMatcher(map[string]string{"abc": "x", "abcdef": "y"}); m.shift != nil || m.byFirst == nil || len((*m.byFirst)['a']) != 2 {
		t.Fatalf("three-byte window: shift %v, byFirst %v", m.shift != nil, m.byFirst != nil)
	}
	m := newMatcher(map[string]string{"abcd": "x"})
	if m.shift == nil || m.byFirst != nil || m.win != 4 {
		t.Fatalf("four-byte window uses no blocks")
	}
	m = newMatcher(map[string]string{"abcdefgh": "x", "qrstuvwxyz": "y"})
	if m.win != 8 || m.maxLen != 10 {
		t.Fatalf("win %d maxLen %d", m.win, m.maxLen)
	}
	if got := slices.Max(m.shift); got != 6 {
		t.Fatalf("full move %d, want win-2 = 6", got)
	}
	if got := m.shift[m.hash("fgh")]; got != 0 {
		t.Fatalf("last block of abcdefgh moves %d", got)
	}
	if got := m.shift[m.hash("abc")]; got != 5 {
		t.Fatalf("first block of abcdefgh moves %d", got)
	}
	if got := m.endsWith(m.hash("xyz")); len(got) != 0 {
		t.Fatalf("xyz lies beyond the window of qrstuvwxyz: %v", got)
	}
	if got := m.endsWith(m.hash("vwx")); len(got) != 1 || m.vals[got[0]] != "qrstuvwxyz" {
		t.Fatalf("ends of vwx: %v", got)
	}
	if got := m.endsWith(m.hash("zzz")); len(got) != 0 {
		t.Fatalf("ends of zzz: %v", got)
	}
	// Values sharing a window share an end entry, longest first.
	m = newMatcher(map[string]string{"wxyz1234": "a", "wxyz1234567": "b", "wxyz12345": "c"})
	if got := m.endsWith(m.hash("234")); len(got) != 3 || m.vals[got[0]] != "wxyz1234567" || m.vals[got[2]] != "wxyz1234" {
		t.Fatalf("shared ends %v", got)
	}
	if len(m.shift) != 1<<minBits {
		t.Fatalf("table of %d slots for three values", len(m.shift))
	}
	big := make(map[string]string)
	for i := range 2000 {
		big[gen(uint64(i), alnum, 20)] = "x"
	}
	if got := len(newMatcher(big).shift); got != 1<<maxBits {
		t.Fatalf("table of %d slots for 2000 values", got)
	}
	// About eight slots per block: 32 values of 18 bytes have 512 blocks
	// (4096 → 8192 slots), of 17 bytes 480 (3840 → 4096).
	for win, want := range map[int]int{18: 8192, 17: 4096} {
		vals := make(map[string]string)
		for i := range 32 {
			vals[gen(uint64(i), alnum, win)] = "x"
		}
		if got := len(newMatcher(vals).shift); got != want {
			t.Errorf("32 values of %d bytes: %d slots, want %d", win, got, want)
		}
	}
	long := newMatcher(map[string]string{strings.Repeat("ab", 50): "x"})
	if long.win != maxWindow {
		t.Fatalf("window %d for a 100-byte value", long.win)
	}
}

// TestFindTwoCursors places matches around the middle of a stretch long
// enough for two cursors: the first half's match wins wherever the second
// cursor stops, one at either side of the middle is found, and each
// cursor goes on alone when the other runs out.
func TestFindTwoCursors(t *testing.T) {
	vals := map[string]string{"secret-value-aa": "<A>", "secret-value-bb": "<B>", "xx-other-secret-yy": "<O>"}
	m := newMatcher(vals)
	const n = 1024
	fill := func() []byte { return bytes.Repeat([]byte("."), n) }
	put := func(b []byte, at int, v string) []byte { copy(b[at:], v); return b }
	limit := n - m.win + 1
	mid := limit / 2
	for _, tt := range []struct {
		name string
		text []byte
		want int // start of the first match, -1 for none
	}{
		{"none", fill(), -1},
		{"only in the second half", put(fill(), mid+100, "secret-value-bb"), mid + 100},
		{"only in the first half", put(fill(), 10, "secret-value-aa"), 10},
		{"first half wins over an earlier stop of the second", put(put(fill(), mid-40, "secret-value-aa"), mid+2, "secret-value-bb"), mid - 40},
		{"at the middle", put(fill(), mid, "secret-value-bb"), mid},
		{"across the middle", put(fill(), mid-5, "secret-value-aa"), mid - 5},
		{"at the very start", put(fill(), 0, "secret-value-aa"), 0},
		{"at the very end", put(fill(), n-len("secret-value-bb"), "secret-value-bb"), n - len("secret-value-bb")},
		// A near miss ends like a value and stops a cursor, then fails.
		{"a near miss in each half", put(put(fill(), 50, "Xecret-value-aa"), mid+50, "Xecret-value-bb"), -1},
		{"near miss before the second half's match", put(put(fill(), 50, "Xecret-value-aa"), mid+70, "secret-value-bb"), mid + 70},
		{"second half's near miss before the first half's match", put(put(fill(), mid-60, "secret-value-aa"), mid+1, "Xecret-value-bb"), mid - 60},
		{"second half's near misses, then its match", put(put(put(fill(), mid+1, "Xecret-value-bb"), mid+40, "Yecret-value-aa"), mid+90, "secret-value-aa"), mid + 90},
		{"near misses back to back in the first half", put(put(put(fill(), 3, "Xecret-value-aa"), 18, "Yecret-value-aa"), 40, "secret-value-bb"), 40},
	} {
		p, k, ok := find(m, tt.text, 0, len(tt.text))
		if tt.want < 0 {
			if ok {
				t.Errorf("%s: found %q at %d", tt.name, m.vals[k], p)
			}
			continue
		}
		if !ok || p != tt.want {
			t.Errorf("%s: got %d (%v), want %d", tt.name, p, ok, tt.want)
			continue
		}
		if got := ReplaceAll(string(tt.text), vals); got != naiveReplace(string(tt.text), vals) {
			t.Errorf("%s: ReplaceAll differs from the reference", tt.name)
		}
	}
	// From an offset and up to a limit, as the stream calls it.
	text := put(put(fill(), 300, "secret-value-aa"), 700, "secret-value-bb")
	if p, _, ok := find(m, text, 301, len(text)); !ok || p != 700 {
		t.Errorf("from 301: %d %v", p, ok)
	}
	if _, _, ok := find(m, text, 301, 700); ok {
		t.Error("match at the limit found")
	}
	if p, _, ok := find(m, text, 0, 301); !ok || p != 300 {
		t.Errorf("limit 301: %d %v", p, ok)
	}
}

// TestFindFourCursors: over a stretch long enough for four cursors, find
// returns the first match whatever the quarters the values, the near
// misses (that stop a cursor and fail) and the matches across quarter
// boundaries fall in: the same as one cursor over the whole stretch.
func TestFindFourCursors(t *testing.T) {
	vals := map[string]string{"secret-value-aa": "<A>", "secret-value-bb": "<B>", "xx-other-secret-yy": "<O>"}
	m := newMatcher(vals)
	const n = 4*fourCursorsMin + 100
	pieces := []string{"secret-value-aa", "secret-value-bb", "xx-other-secret-yy", "Xecret-value-aa", "secret-value-bX", "xx-other-secret-yX"}
	// The same text in every quarter keeps the cursors in step: they stop
	// on their values in the same move, and the earliest quarter wins.
	limit := n - m.win + 1
	q := limit / 4
	for _, quarters := range [][]int{{0, 1, 2, 3}, {1, 2, 3}, {2, 3}, {1, 3}, {3}} {
		for _, v := range []string{"secret-value-bb", "Xecret-value-aa"} {
			text := bytes.Repeat([]byte("."), n)
			for _, i := range quarters {
				copy(text[i*q+100:], v)
			}
			wantP, wantK, wantOK := findBlocks(m, text, 0, limit)
			if p, k, ok := find(m, text, 0, n); ok != wantOK || (ok && (p != wantP || k != wantK)) {
				t.Fatalf("%q in quarters %v: got %d %d %v, want %d %d %v", v, quarters, p, k, ok, wantP, wantK, wantOK)
			}
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	for iter := range 3000 {
		text := bytes.Repeat([]byte("."), n)
		for range r.IntN(5) {
			v := pieces[r.IntN(len(pieces))]
			at := r.IntN(n - len(v) + 1)
			if r.IntN(2) == 0 { // near a quarter boundary
				at = min(max((1+r.IntN(3))*q-len(v)+r.IntN(2*len(v)), 0), n-len(v))
			}
			copy(text[at:], v)
		}
		from := 0
		if iter%3 == 0 {
			from = r.IntN(n / 8)
		}
		wantP, wantK, wantOK := findBlocks(m, text, from, limit)
		p, k, ok := find(m, text, from, n)
		if ok != wantOK || (ok && (p != wantP || k != wantK)) {
			t.Fatalf("iteration %d from %d: got %d %d %v, want %d %d %v", iter, from, p, k, ok, wantP, wantK, wantOK)
		}
		if iter%50 == 0 {
			if got := ReplaceAll(string(text), vals); got != naiveReplace(string(text), vals) {
				t.Fatalf("iteration %d: ReplaceAll differs from the reference", iter)
			}
		}
	}
	// Text of two letters against values of the same letters: cursors stop
	// often, on near misses next to matches and overlapping them.
	ab := map[string]string{"abaabbabaaabbbab": "<1>", "bbabaaabbbababba": "<2>", "aabbabaaab": "<3>"}
	mab := newMatcher(ab)
	for iter := range 300 {
		text := make([]byte, n)
		for i := range text {
			text[i] = "ab"[r.IntN(2)]
		}
		limit := n - mab.win + 1
		wantP, wantK, wantOK := findBlocks(mab, text, 0, limit)
		if p, k, ok := find(mab, text, 0, n); ok != wantOK || (ok && (p != wantP || k != wantK)) {
			t.Fatalf("two letters, iteration %d: got %d %d %v, want %d %d %v", iter, p, k, ok, wantP, wantK, wantOK)
		}
		if iter%30 == 0 {
			if got := ReplaceAll(string(text), ab); got != naiveReplace(string(text), ab) {
				t.Fatalf("two letters, iteration %d: ReplaceAll differs from the reference", iter)
			}
		}
	}
}

type sliceWriter struct{ got [][]byte }

func (w *sliceWriter) Write(p []byte) (int, error) { w.got = append(w.got, p); return len(p), nil }

// TestStreamWithoutValuesDoesNotCopy: a stream that knows no value passes
// the caller's bytes on as they are, and one that does forwards a stretch
// without a match in one write.
func TestStreamWithoutValuesDoesNotCopy(t *testing.T) {
	w := &sliceWriter{}
	s := NewStream(w, nil)
	p := []byte("some output")
	_, _ = s.Write(p)
	if len(w.got) != 1 || &w.got[0][0] != &p[0] {
		t.Fatal("bytes were copied")
	}
	w = &sliceWriter{}
	s = NewStream(w, map[string]string{"secret-value": "<S>"})
	_, _ = s.Write([]byte(strings.Repeat("x", 100)))
	if len(w.got) != 1 || len(w.got[0]) != 100-len("secret-value")+1 {
		t.Fatalf("writes %d", len(w.got))
	}
}

// TestStreamSearchesWritesInPlace: a Write large enough is searched and
// forwarded from the caller's bytes, also after bytes were held back from
// the Write before, whose decision is forwarded first; only what may
// start a value is kept. The output is still ReplaceAll of the whole.
func TestStreamSearchesWritesInPlace(t *testing.T) {
	w := &sliceWriter{}
	s := NewStream(w, map[string]string{"secret-value": "<S>"})
	first := []byte(strings.Repeat("x", 100) + "secr")
	second := []byte("et-value" + strings.Repeat("y", 100))
	_, _ = s.Write(first)
	if len(w.got) != 1 || &w.got[0][0] != &first[0] {
		t.Fatal("the first write was not forwarded from the caller's bytes")
	}
	_, _ = s.Write(second)
	_ = s.Close()
	var all []byte
	aliased := false
	for _, g := range w.got {
		all = append(all, g...)
		if len(g) > 0 && &g[0] == &second[len("et-value")] {
			aliased = true
		}
	}
	if want := strings.Repeat("x", 100) + "<S>" + strings.Repeat("y", 100); string(all) != want {
		t.Fatalf("got %q", all)
	}
	if !aliased {
		t.Fatal("the rest of the second write was not forwarded from the caller's bytes")
	}
}

func TestStreamAdd(t *testing.T) {
	var out bytes.Buffer
	s := NewStream(&out, map[string]string{"alpha-secret": "<A>"})
	_, _ = s.Write([]byte("one alpha-secret two beta-"))
	s.Add(map[string]string{"beta-secret": "<B>", "alpha-secret": "<other>", "": "<empty>"})
	_, _ = s.Write([]byte("secret three alpha-secret"))
	_ = s.Close()
	if got := out.String(); got != "one <A> two <B> three <A>" {
		t.Fatalf("got %q", got)
	}
	// A stream without values learns its first ones.
	out.Reset()
	s = NewStream(&out, nil)
	_, _ = s.Write([]byte("gamma-secret "))
	s.Add(map[string]string{"gamma-secret": "<G>"})
	s.Add(nil)
	_, _ = s.Write([]byte("gamma-secret"))
	_ = s.Close()
	if got := out.String(); got != "gamma-secret <G>" {
		t.Fatalf("got %q", got)
	}
}
