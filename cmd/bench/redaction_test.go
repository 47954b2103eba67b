package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRedactInputs(t *testing.T) {
	repl, vals := redactSet()
	if len(repl) != redactSecrets || len(vals) != redactSecrets {
		t.Fatalf("%d secrets, want %d", len(repl), redactSecrets)
	}
	for _, v := range vals {
		if len(v) < 12 || len(v) > 64 || repl[v] == "" {
			t.Fatalf("secret of %d bytes, marker %q", len(v), repl[v])
		}
	}
	tile := redactText(vals)
	if len(tile) > redactTile || len(tile) < redactTile-200 || tile[len(tile)-1] != '\n' {
		t.Fatalf("tile of %d bytes", len(tile))
	}
	if n := bytes.Count(tile, []byte("DEBUG retrying with token ")); n != redactTile/(64<<10)-1 && n != redactTile/(64<<10) {
		t.Fatalf("%d secrets planted", n)
	}
	if err := checkRedaction(tile, repl); err != nil {
		t.Fatal(err)
	}
	// The check fails when nothing is replaced.
	if err := checkRedaction([]byte(strings.Repeat("plain\n", 100)), repl); err == nil {
		t.Fatal("text without secrets passed the check")
	}
}

func TestTimeCatOf(t *testing.T) {
	if _, err := timeCatOf(context.Background(), bytes.Repeat([]byte("x"), 1<<20)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := timeCatOf(ctx, []byte("x")); err == nil {
		t.Fatal("cancelled context ran cat")
	}
}
