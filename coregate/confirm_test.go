package coregate

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestHostKeyConcurrentFirstUseAgrees(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runtime", "host.key")
	keys := make([]*HostKey, 16)
	errs := make([]error, len(keys))
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() { keys[i], errs[i] = LoadHostKey(path) })
	}
	wg.Wait()
	for i := range keys {
		if errs[i] != nil {
			t.Fatalf("LoadHostKey: %v", errs[i])
		}
		if keys[i].b != keys[0].b {
			t.Fatal("concurrent first uses made different keys")
		}
	}
	if keys[0].isZero() {
		t.Fatal("zero key")
	}
}

// FuzzCheckToken: no input panics the token check, and only the issued
// token (its MAC in either hex case, surrounding space trimmed) confirms.
func FuzzCheckToken(f *testing.F) {
	k, _ := NewHostKey(bytes.Repeat([]byte{0x5c}, HostKeySize))
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	tokens := NewTokens(k, "", func() time.Time { return at })
	c := Confirmation{purpose: purposeSave, subject: "assistant", bound: []string{strings.Repeat("a", 40), "tree", "security"}}
	issued, err := tokens.Issue(c)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{issued, " " + issued + "\n", strings.ToUpper(issued), "", ":", "confirm-save:", "confirm-save::::", "confirm-save:assistant:20300102T040405Z:",
		"mcp-review:" + strings.Repeat("0", 64), "confirm-save:a:b:c:d:e", issued[:len(issued)-1], issued + "0"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, token string) {
		err := tokens.Check(token, c)
		if err == nil {
			got := strings.TrimSpace(token)
			if len(got) != len(issued) || got[:len(got)-64] != issued[:len(issued)-64] || !strings.EqualFold(got, issued) {
				t.Fatalf("%q confirmed; only %q should", token, issued)
			}
			return
		}
		var te *TokenError
		if !errors.As(err, &te) {
			t.Fatalf("%q: not a token refusal: %v", token, err)
		}
	})
}
