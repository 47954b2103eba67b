package redact

import (
	"bytes"
	"errors"
	"slices"
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
