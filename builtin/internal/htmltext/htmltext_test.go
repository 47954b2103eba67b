package htmltext

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzReadPage: any body under any content type decodes without panic
// into valid UTF-8 of at most maxChars characters.
func FuzzReadPage(f *testing.F) {
	f.Add("text/html", []byte("<title>t</title><p>a<b>b</b></p><script>x</script>"), 50)
	f.Add("text/html", []byte("<pre>\r\n x\n</pre><li>one<li>two<svg><svg></svg>"), 5)
	f.Add("text/plain; charset=shift_jis", []byte{0x93, 0xfa, 0x96, 0x7b, 0xff}, 3)
	f.Add("", []byte("\xef\xbb\xbf<!DOCTYPE html><meta charset=utf-16><p>x"), 10)
	f.Add("text/html; charset", []byte("<title>"+strings.Repeat("w ", 400)+"</title>body"), 20)
	f.Fuzz(func(t *testing.T, ct string, body []byte, maxChars int) {
		maxChars = 1 + abs(maxChars)%200
		p, err := Read(bytes.NewReader(body), ct, maxChars, 4096)
		if err != nil {
			t.Fatalf("readPage error on an in-memory body: %v", err)
		}
		c := p.Content()
		if !utf8.ValidString(c) || !utf8.ValidString(p.Title) {
			t.Fatalf("invalid UTF-8: %q", c)
		}
		if n := utf8.RuneCountInString(c); n > maxChars {
			t.Fatalf("%d characters, budget %d", n, maxChars)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func TestHTMLTextBudgetAndTitle(t *testing.T) {
	body := "<title>" + strings.Repeat("Long title ", 60) + "</title><p>" + strings.Repeat("x", 50) + "</p>"
	p, err := Read(strings.NewReader(body), "text/html", 40, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if utf8.RuneCountInString(p.Content()) != 40 || !p.Truncated || utf8.RuneCountInString(p.Title) > maxTitleChars {
		t.Fatalf("content %q (title %d chars) truncated=%v", p.Content(), utf8.RuneCountInString(p.Title), p.Truncated)
	}
	p, err = Read(strings.NewReader("<title>T</title><p>"+strings.Repeat("y", 20)+"</p>"), "text/html", 23, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if p.Content() != "T\n\n"+strings.Repeat("y", 20) || p.Truncated {
		t.Fatalf("exact budget: %q truncated=%v", p.Content(), p.Truncated)
	}
}
