package mcp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/demiurge/demiurge/redact"
)

// Stderr capture bounds (spec tool-runtime §8.5): the first 12,000
// characters of a stdio server's stderr are kept; the rest is read and
// dropped so the server never blocks on a full pipe.
const (
	stderrKeepChars = 12000
	// stderrKeepBytes holds 12,001 characters of any encoding.
	stderrKeepBytes = (stderrKeepChars + 1) * utf8.UTFMax
	// StderrLogName is the file, under Options.LogDir, every stdio
	// server's captured stderr is appended to when its connection closes.
	StderrLogName = "mcp-stderr.log"
)

// stderrCapture keeps the head of one server's stderr. The process
// manager drains the pipe into it, so the server never blocks on a full
// pipe however much it writes.
type stderrCapture struct {
	mu        sync.Mutex // guards head, truncated
	head      []byte
	truncated bool
}

// Write keeps what still fits and drops the rest; it never fails.
func (c *stderrCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := stderrKeepBytes - len(c.head)
	if room > 0 {
		c.head = append(c.head, p[:min(len(p), room)]...)
	}
	if len(p) > room {
		c.truncated = true
	}
	return len(p), nil
}

// text returns the captured characters (at most 12,000, invalid UTF-8
// replaced) and whether anything was dropped.
func (c *stderrCapture) text() (string, bool) {
	c.mu.Lock()
	head, truncated := string(c.head), c.truncated
	c.mu.Unlock()
	head = strings.ToValidUTF8(head, "\uFFFD")
	if utf8.RuneCountInString(head) > stderrKeepChars {
		i, n := 0, 0
		for i < len(head) && n < stderrKeepChars {
			_, size := utf8.DecodeRuneInString(head[i:])
			i += size
			n++
		}
		head, truncated = head[:i], true
	}
	return head, truncated
}

// stderrLog appends captured stderr to <LogDir>/mcp-stderr.log, private to
// the Host user. Appends of concurrently closing servers are serialised.
type stderrLog struct {
	dir string
	mu  sync.Mutex // serialises appends
}

// append writes one server's section: a header line, the redacted text
// and, when capture was cut, a truncation line. Empty captures write
// nothing; a redaction failure writes "<redaction-failed>" instead of the
// text. Errors are returned for the Manager's log only.
func (l *stderrLog) append(serverID, text string, truncated bool, red *redact.Redactor) error {
	if l == nil || l.dir == "" || (text == "" && !truncated) {
		return nil
	}
	safe := redactStderr(text, red)
	var b strings.Builder
	b.WriteString("\n===== MCP server '" + serverID + "' stderr =====\n")
	b.WriteString(safe)
	if !strings.HasSuffix(safe, "\n") {
		b.WriteString("\n")
	}
	if truncated {
		b.WriteString("...[stderr capture truncated]\n")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return err
	}
	if fi, err := os.Lstat(l.dir); err != nil || !fi.IsDir() {
		return errors.New("log directory is not a directory")
	}
	_ = os.Chmod(l.dir, 0o700)
	path := filepath.Join(l.dir, StderrLogName)
	f, err := openPrivateAppend(path)
	if err != nil {
		return err
	}
	_ = f.Chmod(0o600)
	_, werr := f.WriteString(b.String())
	cerr := f.Close()
	return errors.Join(werr, cerr)
}

// redactStderr applies the connection's env and header secrets, then
// whatever secret shapes discovery recognises in the text itself (a
// "--token=..." a server echoes, an Authorization header it logs), in the
// durable view. A panic while redacting yields the fixed failure marker.
func redactStderr(text string, red *redact.Redactor) (out string) {
	defer func() {
		if recover() != nil {
			out = "<redaction-failed>"
		}
	}()
	red = red.With(redact.Discover(text)...)
	return red.String(text, redact.Durable)
}
