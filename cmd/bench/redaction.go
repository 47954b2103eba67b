package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os/exec"
	"time"

	"github.com/demiurge/demiurge/redact"
)

// Figure and target of stream redaction.
const (
	figRedact         = "redaction of a 256 MiB stream, 200 secrets"
	redactRatioTarget = 0.5

	redactBytes    = 256 << 20
	redactSecrets  = 200
	redactTile     = 4 << 20 // distinct text, repeated up to redactBytes
	redactChunk    = 32 << 10
	redactRounds   = 3
	secretAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-"
)

// redactRows measures redact.Stream over 256 MiB of log text with a
// 200-secret set (values of 12 to 64 characters, one occurrence per 64 KiB)
// written in 32 KiB chunks, against `cat` of the same bytes from a pipe to
// /dev/null; each is the best of three rounds, alternately. One untimed
// round first checks that the stream's output is ReplaceAll of the text.
func redactRows(ctx context.Context) ([]row, error) {
	repl, vals := redactSet()
	tile := redactText(vals)
	data := bytes.Repeat(tile, redactBytes/len(tile))
	if err := checkRedaction(tile, repl); err != nil {
		return nil, err
	}
	streamBest, catBest := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	for range redactRounds {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, err := timeStream(data, repl)
		if err != nil {
			return nil, err
		}
		streamBest = min(streamBest, d)
		if d, err = timeCatOf(ctx, data); err != nil {
			return nil, err
		}
		catBest = min(catBest, d)
	}
	mb := float64(len(data)) / 1e6
	stream, cat := mb/streamBest.Seconds(), mb/catBest.Seconds()
	return []row{
		{figure: figRedact + ", ratio to cat", value: fmt.Sprintf("%.2f", stream/cat), target: fmt.Sprintf("≥ %g", redactRatioTarget), verdict: check(stream/cat >= redactRatioTarget)},
		{figure: figRedact + ", Stream", value: fmt.Sprintf("%.0f MB/s", stream)},
		{figure: figRedact + ", cat", value: fmt.Sprintf("%.0f MB/s", cat)},
	}, nil
}

// redactSet returns 200 secrets of 12 to 64 characters, as a turn's set
// holds API keys, tokens and passwords, and their markers.
func redactSet() (map[string]string, []string) {
	r := rand.New(rand.NewPCG(12, 200))
	repl := make(map[string]string, redactSecrets)
	vals := make([]string, 0, redactSecrets)
	for len(vals) < redactSecrets {
		b := make([]byte, 12+r.IntN(53))
		for i := range b {
			b[i] = secretAlphabet[r.IntN(len(secretAlphabet))]
		}
		if _, dup := repl[string(b)]; !dup {
			repl[string(b)] = redact.Marker(fmt.Sprintf("SECRET_%d", len(vals)))
			vals = append(vals, string(b))
		}
	}
	return repl, vals
}

// redactText returns redactTile bytes of log lines with one secret in
// every 64 KiB, each line whole.
func redactText(vals []string) []byte {
	var b bytes.Buffer
	next := 64 << 10
	for i := 0; ; i++ {
		start := b.Len()
		fmt.Fprintf(&b, "2026-12-01T12:%02d:%02d.%03dZ INFO request id=%08x path=/api/v1/items/%d status=200 bytes=%d user=ann@example.com\n",
			i/60%60, i%60, i%1000, uint32(i)*2654435761, i, i*37%9000)
		if b.Len() >= next {
			fmt.Fprintf(&b, "DEBUG retrying with token %s after 401\n", vals[(next>>16)%len(vals)])
			next += 64 << 10
		}
		if b.Len() > redactTile {
			b.Truncate(start)
			return b.Bytes()
		}
	}
}

// checkRedaction streams tile in chunks and compares the output with
// ReplaceAll of the whole, so the figure measures correct work.
func checkRedaction(tile []byte, repl map[string]string) error {
	var got bytes.Buffer
	if err := writeChunks(redact.NewStream(&got, repl), tile); err != nil {
		return err
	}
	if want := redact.ReplaceAll(string(tile), repl); got.String() != want {
		return fmt.Errorf("stream output differs from ReplaceAll (%d vs %d bytes)", got.Len(), len(want))
	}
	if !bytes.Contains(got.Bytes(), []byte("<redacted:SECRET_")) {
		return fmt.Errorf("no secret was replaced in the text")
	}
	return nil
}

func writeChunks(w io.WriteCloser, data []byte) error {
	for off := 0; off < len(data); off += redactChunk {
		if _, err := w.Write(data[off:min(len(data), off+redactChunk)]); err != nil {
			return err
		}
	}
	return w.Close()
}

// timeStream is the wall time of data through a Stream, built with the
// set, into a writer that drops it.
func timeStream(data []byte, repl map[string]string) (time.Duration, error) {
	t0 := time.Now()
	err := writeChunks(redact.NewStream(discardWriter{}, repl), data)
	return time.Since(t0), err
}

// timeCatOf is the wall time of `cat` copying data from a pipe to
// /dev/null.
func timeCatOf(ctx context.Context, data []byte) (time.Duration, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "cat")
	cmd.Stdin = bytes.NewReader(data)
	cmd.Stderr = &stderr // stdout stays nil: /dev/null
	cmd.Env = []string{"LC_ALL=C"}
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("cat baseline: %v: %.200s", err, stderr.String())
	}
	return time.Since(t0), nil
}

type discardWriter struct{}

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }
