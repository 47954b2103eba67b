package redact

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func discoverChunks(t *testing.T, chunks []string, repl map[string]string, opts DiscoverOptions) (string, *DiscoveringStream) {
	t.Helper()
	var out bytes.Buffer
	s := NewDiscoveringStream(&out, repl, opts)
	for _, c := range chunks {
		if n, err := s.Write([]byte(c)); err != nil || n != len(c) {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String(), s
}

func TestDiscoveringStreamRedactsWhatItFinds(t *testing.T) {
	var told []Secret
	in := "starting\nconfig: password=hunter22x\nconnecting with hunter22x\nbound sk-known-1234\n" +
		"token ghp_" + gen(12, alnum, 36) + " used\n"
	got, s := discoverChunks(t, []string{in}, map[string]string{"sk-known-1234": "<redacted:KNOWN>"},
		DiscoverOptions{OnDiscover: func(sec Secret) { told = append(told, sec) }})
	want := "starting\nconfig: password=<redacted:PASSWORD>\nconnecting with <redacted:PASSWORD>\nbound <redacted:KNOWN>\n" +
		"token <redacted:GITHUB_PAT> used\n"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	found := s.Discovered()
	if len(found) != 2 || found[0].Value != "hunter22x" || found[0].Name != "PASSWORD" || found[1].Name != "GITHUB_PAT" {
		t.Fatalf("discovered %v", found)
	}
	if len(told) != 2 || told[0] != found[0] || told[1] != found[1] {
		t.Fatalf("OnDiscover got %v", told)
	}
	// The known value is not reported as discovered.
	for _, sec := range found {
		if sec.Value == "sk-known-1234" {
			t.Fatal("known value reported")
		}
	}
}

// TestDiscoveringStreamWindow pins the look-back: an occurrence before the
// give-away is replaced while it is within the window, and only then.
func TestDiscoveringStreamWindow(t *testing.T) {
	const w = 64
	pad := func(n int) string { return strings.Repeat(".", n-1) + "\n" }
	for _, tt := range []struct {
		name   string
		before int // bytes between the bare occurrence and the give-away
		leaks  bool
	}{{"just inside", w - 40, false}, {"far before", 10 * w, true}} {
		t.Run(tt.name, func(t *testing.T) {
			in := "early s3cr3tvalue\n" + pad(tt.before) + "password=s3cr3tvalue\n" + pad(3*w) + "late s3cr3tvalue\n"
			for _, chunk := range []int{1, 7, w, 3 * w, len(in)} {
				var chunks []string
				for i := 0; i < len(in); i += chunk {
					chunks = append(chunks, in[i:min(len(in), i+chunk)])
				}
				got, _ := discoverChunks(t, chunks, nil, DiscoverOptions{Window: w})
				if strings.Contains(got, "password=s3cr3tvalue") || strings.Contains(got, "late s3cr3tvalue") {
					t.Fatalf("chunk %d: give-away or later occurrence kept: %q", chunk, got)
				}
				if early := strings.Contains(got, "early s3cr3tvalue"); early != tt.leaks {
					t.Fatalf("chunk %d: early occurrence kept = %v, want %v", chunk, early, tt.leaks)
				}
			}
		})
	}
}

// TestDiscoveringStreamChunking: whatever the chunking, with lines shorter
// than the window the output is ReplaceAll of the input with everything
// Discover finds in it, when each secret is given away before it recurs.
func TestDiscoveringStreamChunking(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	var secrets []string
	for i := range 400 {
		switch {
		case i%37 == 0:
			v := gen(uint64(i), alnum, 8+i%20)
			secrets = append(secrets, v)
			fmt.Fprintf(&b, "line %d: export API_TOKEN=%s\n", i, v)
		case i%11 == 0 && len(secrets) > 0:
			fmt.Fprintf(&b, "line %d: using %s now\n", i, secrets[r.IntN(len(secrets))])
		case i%53 == 0:
			fmt.Fprintf(&b, "line %d: key AKIA%s\n", i, gen(uint64(i), upper32, 16))
		default:
			fmt.Fprintf(&b, "line %d: nothing to see, status=ok bytes=%d\n", i, r.IntN(100000))
		}
	}
	in := b.String()
	repl := map[string]string{}
	for _, s := range Discover(in) {
		repl[s.Value] = Marker(s.Name)
	}
	want := ReplaceAll(in, repl)
	for _, v := range secrets {
		if strings.Contains(want, v) {
			t.Fatalf("reference keeps %q", v)
		}
	}
	for _, w := range []int{128, 512, 4096} {
		for range 20 {
			got, _ := discoverChunks(t, randomChunks(r, in), nil, DiscoverOptions{Window: w})
			if got != want {
				t.Fatalf("window %d: output differs from ReplaceAll\n got %q\nwant %q", w, got, want)
			}
		}
	}
}

func TestDiscoveringStreamBoundsItsBuffer(t *testing.T) {
	const w = 256
	var out bytes.Buffer
	s := NewDiscoveringStream(&out, nil, DiscoverOptions{Window: w})
	big := bytes.Repeat([]byte("0123456789abcdef"), 1000) // no line break at all
	if _, err := s.Write(big); err != nil {
		t.Fatal(err)
	}
	if len(s.buf) >= stepWindows*w {
		t.Fatalf("holds %d bytes, window %d", len(s.buf), w)
	}
	if out.Len() < len(big)-stepWindows*w {
		t.Fatalf("forwarded %d of %d bytes", out.Len(), len(big))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), big) {
		t.Fatal("output differs from input")
	}
	if _, err := s.Write([]byte("x")); !errors.Is(err, ErrStreamClosed) {
		t.Fatalf("write after close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

func TestDiscoveringStreamDefaultWindow(t *testing.T) {
	s := NewDiscoveringStream(&bytes.Buffer{}, nil, DiscoverOptions{})
	if s.window != DefaultDiscoverWindow {
		t.Fatalf("window %d", s.window)
	}
	// Nothing is forwarded before stepWindows windows are held.
	var out bytes.Buffer
	s = NewDiscoveringStream(&out, nil, DiscoverOptions{Window: 10})
	_, _ = s.Write([]byte("012345678901234567890123456789012345678\n")) // 40 bytes: one step
	if out.String() != "012345678901234567890123456789" {
		t.Fatalf("forwarded %q", out.String())
	}
	_, _ = s.Write([]byte("abcdefghijklmnopqrstuvwxyz012")) // 39 held: no step
	if out.String() != "012345678901234567890123456789" {
		t.Fatalf("forwarded %q", out.String())
	}
}

func TestDiscoveringStreamWriteError(t *testing.T) {
	s := NewDiscoveringStream(&failWriter{}, nil, DiscoverOptions{Window: 8})
	if _, err := s.Write([]byte(strings.Repeat("x", 40))); err == nil {
		t.Fatal("write error not reported")
	}
	s = NewDiscoveringStream(&failWriter{}, nil, DiscoverOptions{Window: 8})
	_, _ = s.Write([]byte("abc"))
	if err := s.Close(); err == nil {
		t.Fatal("close error not reported")
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

// TestDiscoveringStreamProgress: a line break early in the buffer does not
// keep it full, or every later byte would search it all again.
func TestDiscoveringStreamProgress(t *testing.T) {
	const w = 100
	var out bytes.Buffer
	s := NewDiscoveringStream(&out, nil, DiscoverOptions{Window: w})
	_, _ = s.Write([]byte("x\n" + strings.Repeat("y", 4*w-2)))
	if out.Len() != 3*w {
		t.Fatalf("forwarded %d bytes of %d", out.Len(), 4*w)
	}
	// A line start in the second half of what may go is kept back.
	out.Reset()
	s = NewDiscoveringStream(&out, nil, DiscoverOptions{Window: w})
	_, _ = s.Write([]byte(strings.Repeat("a", 199) + "\n" + strings.Repeat("b", 4*w-200)))
	if out.String() != strings.Repeat("a", 199)+"\n" {
		t.Fatalf("forwarded %d bytes", out.Len())
	}
	// The search ends at a line break in its second half, and a window
	// before it stays.
	out.Reset()
	s = NewDiscoveringStream(&out, nil, DiscoverOptions{Window: w})
	_, _ = s.Write([]byte(strings.Repeat("a", 249) + "\n" + strings.Repeat("b", 4*w-250)))
	if out.String() != strings.Repeat("a", 150) {
		t.Fatalf("forwarded %d bytes", out.Len())
	}
	// A line break in the first half does not end it.
	out.Reset()
	s = NewDiscoveringStream(&out, nil, DiscoverOptions{Window: w})
	_, _ = s.Write([]byte(strings.Repeat("a", 198) + "\n" + strings.Repeat("b", 4*w-199)))
	if out.Len() != 199 {
		t.Fatalf("forwarded %d bytes", out.Len())
	}
}

// TestDiscoveringStreamCutEdges pins the two line-break rules at their
// boundaries: a break right at the middle ends the search, and a break
// right at half of what may go keeps the line back.
func TestDiscoveringStreamCutEdges(t *testing.T) {
	const w = 100
	forwarded := func(in string) int {
		var out bytes.Buffer
		s := NewDiscoveringStream(&out, nil, DiscoverOptions{Window: w})
		_, _ = s.Write([]byte(in))
		return out.Len()
	}
	if got := forwarded(strings.Repeat("a", 200) + "\n" + strings.Repeat("b", 199)); got != 101 {
		t.Errorf("break at the middle: forwarded %d, want 101", got)
	}
	if got := forwarded(strings.Repeat("a", 150) + "\n" + strings.Repeat("b", 249)); got != 151 {
		t.Errorf("break at half: forwarded %d, want 151", got)
	}
	if got := forwarded(strings.Repeat("a", 149) + "\n" + strings.Repeat("b", 250)); got != 300 {
		t.Errorf("break before half: forwarded %d, want 300", got)
	}
}
