package procbench

import (
	"io"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/redact"
)

// readSize is a foreground drain's read: 1 MiB.
const readSize = 1 << 20

// discoveryCorpus is code-like text: assignments, key: value pairs, URLs
// and flags, the forms discovery looks at, with no secret in them.
const discoveryCorpus = `func (s *server) handle(w http.ResponseWriter, r *http.Request) {
	timeout := 30 * time.Second // retry = 3
	url := "https://example.com/api/v1/items?page=2&limit=50"
	log.Printf("status: %d, bytes: %d", code, n)
	cfg := Config{Host: "db.internal", Port: 5432, User: "app"}
}
name: build
on: [push]
  run: go test -race ./... --count=1 --timeout 10m
The quick brown fox jumps over the lazy dog; total = sum(values) / len(values).
`

// MeasureOutputDiscovery pushes bytes of code-like text through the
// terminal's output stage (line-wise discovery with redact.Discover, then
// exact-value replacement) in 1 MiB reads, as a drain does, and returns its
// throughput in MB/s (10^6 bytes). It is the bench driver's figure for what
// discovery adds to a command's output; the text holds no secret, so every
// byte is searched and none replaced.
func MeasureOutputDiscovery(bytes int64) (mbps float64, err error) {
	if bytes <= 0 {
		return 0, demiurge.Errorf(demiurge.EINVALID, "measure output discovery: bytes must be positive, got %d", bytes)
	}
	chunk := []byte(strings.Repeat(discoveryCorpus, readSize/len(discoveryCorpus)))
	discover := func(text string) map[string]string { return redact.Replacements(redact.Discover(text)) }
	known := map[string]string{"measure-drain-secret-value": "<redacted:MEASURE>"}
	r := process.NewOutputRedactor(io.Discard, known, discover)
	buf := make([]byte, 0, len(chunk)+r.HoldMax())
	t0 := time.Now()
	for sent := int64(0); sent < bytes; sent += int64(len(chunk)) {
		buf = append(buf, chunk...)
		held := r.Process(buf, false)
		buf = append(buf[:0], buf[len(buf)-held:]...)
	}
	r.Process(buf, true)
	return float64(bytes) / 1e6 / time.Since(t0).Seconds(), nil
}
