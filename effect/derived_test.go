package effect_test

import (
	"errors"
	"testing"

	"github.com/demiurge/demiurge/effect"
)

type derivedKey struct{}

// A value derived from a catalog is made once per catalog; a failure is
// not kept, and another catalog makes its own.
func TestDerivedIsMadeOncePerCatalog(t *testing.T) {
	a := mustCatalog(t, effect.Definition{Name: "t", Source: "builtin"})
	b := mustCatalog(t, effect.Definition{Name: "t", Source: "builtin"}, effect.Definition{Name: "u", Source: "builtin"})
	makes := 0
	count := func(c *effect.Catalog) (int, error) {
		makes++
		return len(c.Entries()), nil
	}
	fail := func(*effect.Catalog) (int, error) { makes++; return 0, errors.New("no") }

	if _, err := effect.Derived(a, derivedKey{}, fail); err == nil {
		t.Fatal("a failing make returned no error")
	}
	for range 3 {
		if n, err := effect.Derived(a, derivedKey{}, count); err != nil || n != 1 {
			t.Fatalf("catalog a: %d, %v; want 1", n, err)
		}
	}
	if n, err := effect.Derived(b, derivedKey{}, count); err != nil || n != 2 {
		t.Fatalf("catalog b: %d, %v; want 2", n, err)
	}
	if makes != 3 {
		t.Fatalf("make ran %d times, want 3 (the failure, then once per catalog)", makes)
	}
}
