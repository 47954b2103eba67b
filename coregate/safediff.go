package coregate

import (
	"bytes"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/demiurge/demiurge/redact"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// Bounds of a secret-safe diff.
const (
	maxDiffLinesPerFile = 400
	maxDiffBytes        = 256 << 10
	maxDiffFileBytes    = 256 << 10 // larger files are named, not diffed (the line diff is O(N·D))
	diffContext         = 3
)

// Diff renders a line diff of the changed files with every credential
// redaction can find replaced by a marker. Secrets are gathered from both
// versions of every file first (text scanning, values under sensitive
// YAML keys, and every env/headers value of YAML files), so a secret found
// in one file is hidden in all of them. Binary files are named, not shown.
// The result is bounded.
func (e *Edit) Diff() string {
	type pair struct {
		path     string
		old, new []byte
		hadOld   bool
		hasNew   bool
	}
	var pairs []pair
	var secrets []redact.Secret
	for _, c := range e.changed {
		od, ook, _ := e.ReadOld(c.Path)
		nd, nok, _ := e.ReadNew(c.Path)
		pairs = append(pairs, pair{c.Path, od, nd, ook, nok})
		for _, d := range [][]byte{od, nd} {
			secrets = append(secrets, fileSecrets(c.Path, d)...)
		}
	}
	red := redact.New(secrets...)
	var b strings.Builder
	for _, p := range pairs {
		if b.Len() >= maxDiffBytes {
			b.WriteString("… diff truncated\n")
			break
		}
		from, to := "a/"+p.path, "b/"+p.path
		if !p.hadOld {
			from = "/dev/null"
		}
		if !p.hasNew {
			to = "/dev/null"
		}
		fmt.Fprintf(&b, "--- %s\n+++ %s\n", red.String(from, redact.Operator), red.String(to, redact.Operator))
		if isBinary(p.old) || isBinary(p.new) {
			b.WriteString("Binary file changed\n")
			continue
		}
		if len(p.old) > maxDiffFileBytes || len(p.new) > maxDiffFileBytes {
			fmt.Fprintf(&b, "File too large to show (%d -> %d bytes)\n", len(p.old), len(p.new))
			continue
		}
		writeHunks(&b, string(p.old), string(p.new), func(s string) string { return red.String(s, redact.Operator) })
	}
	return b.String()
}

// fileSecrets gathers the secrets of one file's content.
func fileSecrets(p string, data []byte) []redact.Secret {
	if len(data) == 0 || isBinary(data) {
		return nil
	}
	out := redact.Discover(string(data))
	if ext := path.Ext(p); ext == ".yaml" || ext == ".yml" {
		if m, err := decodeLoose(p, data); err == nil {
			out = append(out, redact.Discover(m)...)
			out = append(out, optionSecrets(m)...)
			for _, key := range []string{"env", "headers"} {
				if vals, ok := m[key].(map[string]any); ok {
					for name, v := range vals {
						if s := fmt.Sprint(v); strings.TrimSpace(s) != "" {
							out = append(out, redact.Secret{Value: s, Name: strings.ToUpper(redact.NormalizeField(name)), Source: "field:" + key + "." + name})
						}
					}
				}
			}
		}
	}
	return out
}

func isBinary(data []byte) bool {
	head := data
	if len(head) > 8000 {
		head = head[:8000]
	}
	return bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(data)
}

// writeHunks writes a unified-style line diff, collapsing long unchanged
// runs to diffContext lines around each change.
func writeHunks(b *strings.Builder, old, new string, clean func(string) string) {
	lines := 0
	emit := func(prefix, line string) bool {
		if lines >= maxDiffLinesPerFile {
			return false
		}
		lines++
		b.WriteString(prefix + clean(line) + "\n")
		return true
	}
	diffs := diff.Do(old, new)
	for i, d := range diffs {
		text := strings.TrimSuffix(d.Text, "\n")
		if text == "" && d.Text == "" {
			continue
		}
		ls := strings.Split(text, "\n")
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			for _, l := range ls {
				if !emit("-", l) {
					break
				}
			}
		case diffmatchpatch.DiffInsert:
			for _, l := range ls {
				if !emit("+", l) {
					break
				}
			}
		default:
			first, last := i == 0, i == len(diffs)-1
			keepHead, keepTail := diffContext, diffContext
			if first {
				keepHead = 0
			}
			if last {
				keepTail = 0
			}
			if len(ls) <= keepHead+keepTail {
				for _, l := range ls {
					emit(" ", l)
				}
				continue
			}
			for _, l := range ls[:keepHead] {
				emit(" ", l)
			}
			if lines < maxDiffLinesPerFile {
				fmt.Fprintf(b, "@@ %d unchanged lines @@\n", len(ls)-keepHead-keepTail)
			}
			for _, l := range ls[len(ls)-keepTail:] {
				emit(" ", l)
			}
		}
	}
	if lines >= maxDiffLinesPerFile {
		b.WriteString("… file diff truncated\n")
	}
}

// optionSecrets finds values that follow a sensitive option in YAML lists
// (args: ["--api-key", "VALUE"]), a form text scanning cannot see.
func optionSecrets(v any) []redact.Secret {
	var out []redact.Secret
	switch t := v.(type) {
	case map[string]any:
		for _, c := range t {
			out = append(out, optionSecrets(c)...)
		}
	case []any:
		for i, c := range t {
			prev, _ := t[max(i-1, 0)].(string)
			if s, ok := c.(string); ok && i > 0 && strings.HasPrefix(prev, "-") && redact.SensitiveField(strings.TrimLeft(prev, "-")) && strings.TrimSpace(s) != "" {
				out = append(out, redact.Secret{Value: s, Name: "COMMAND_SECRET", Source: "arg:" + prev})
			}
			out = append(out, optionSecrets(c)...)
		}
	}
	return out
}
