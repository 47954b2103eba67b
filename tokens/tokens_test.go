package tokens_test

import (
	"strings"
	"testing"

	"github.com/demiurge/demiurge/tokens"
)

func TestCounters(t *testing.T) {
	o := tokens.For(tokens.O200k)
	if !o.Exact() || o.Name() != tokens.O200k {
		t.Fatalf("o200k counter %s exact %v", o.Name(), o.Exact())
	}
	if n := o.Count("hello world"); n != 2 {
		t.Fatalf("o200k counts %d tokens in \"hello world\", want 2", n)
	}
	if n := tokens.For(tokens.Cl100k).Count("hello world"); n != 2 {
		t.Fatalf("cl100k counts %d, want 2", n)
	}
	e := tokens.For("")
	if e.Exact() || e.Name() != tokens.Estimate || e.Count("") != 0 {
		t.Fatalf("estimate %s exact %v", e.Name(), e.Exact())
	}
	// The estimate stays within a factor of two of the BPE on prose,
	// code and CJK text.
	for _, text := range []string{
		strings.Repeat("The quick brown fox jumps over the lazy dog. ", 200),
		strings.Repeat("func (w *window) budget() int { return w.limits.ContextWindow - w.reserve }\n", 100),
		strings.Repeat("上下文窗口的预算不能超过模型的限制。", 100),
	} {
		exact, est := o.Count(text), e.Count(text)
		if est < exact/2 || est > exact*2 {
			t.Errorf("estimate %d vs BPE %d for %.30q", est, exact, text)
		}
	}
}

func TestCalibration(t *testing.T) {
	var c tokens.Calibration
	if c.Factor() != 1 || c.Observed() || c.Apply(100) != 100 {
		t.Fatal("a fresh calibration is not neutral")
	}
	c.Observe(100, 150)
	if c.Factor() != 1.5 || c.Apply(100) != 150 {
		t.Fatalf("factor %v", c.Factor())
	}
	c.Observe(100, 100)
	if c.Factor() != 1.25 {
		t.Fatalf("smoothed factor %v, want 1.25", c.Factor())
	}
	c.Observe(0, 10) // ignored
	c.Observe(1, 1000)
	if c.Factor() > 4 {
		t.Fatalf("factor %v above its bound", c.Factor())
	}
}

func BenchmarkCountMiB(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog; tokens 12345. ", (1<<20)/60)
	for _, enc := range []string{tokens.O200k, tokens.Estimate} {
		c := tokens.For(enc)
		b.Run(enc, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for range b.N {
				c.Count(text)
			}
		})
	}
}
