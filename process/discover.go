package process

import (
	"bytes"
	"maps"
)

// discoverLineMax is how much of an unfinished line the discovering stage
// holds back for the next read: a credential assignment split by a read
// boundary is seen whole as long as its line is shorter than this.
const discoverLineMax = 4 << 10

// discoveringRedactor finds secrets in the output itself (Spec.Discover)
// and redacts them from that point on, together with the values known at
// the start (Spec.Redact).
//
// It works on whole lines: of the bytes it is given, it passes on only
// those up to the last line break (or all but discoverLineMax bytes of a
// longer unfinished line) and holds back the rest, so a value discovered in
// a line is added to the exact-value stage before any byte of that line
// reaches it.
//
// A value that appeared in an earlier line than the one it is discovered in
// has already been forwarded; only later occurrences are redacted.
type discoveringRedactor struct {
	discover func(text string) map[string]string
	known    map[string]string
	red      *streamRedactor
}

func newDiscoveringRedactor(red *streamRedactor, repl map[string]string, discover func(string) map[string]string) *discoveringRedactor {
	known := maps.Clone(repl)
	if known == nil {
		known = map[string]string{}
	}
	return &discoveringRedactor{discover: discover, known: known, red: red}
}

// holdMax is the most process may hand back.
func (d *discoveringRedactor) holdMax() int { return discoverLineMax }

// process follows streamRedactor.process: data is what it handed back last
// time followed by new bytes; it returns how many bytes at the end of data
// it did not consume.
func (d *discoveringRedactor) process(data []byte, final bool) (held int) {
	cut := len(data)
	if !final {
		cut = bytes.LastIndexByte(data, '\n') + 1
		cut = max(cut, len(data)-discoverLineMax)
	}
	if found := d.newValues(data[:cut]); len(found) > 0 {
		maps.Copy(d.known, found)
		d.red.add(found)
	}
	d.red.process(data[:cut], final)
	return len(data) - cut
}

// newValues returns the secrets in text that are not known yet.
func (d *discoveringRedactor) newValues(text []byte) map[string]string {
	if len(text) == 0 {
		return nil
	}
	var out map[string]string
	for v, mark := range d.discover(string(text)) {
		if _, known := d.known[v]; v == "" || known {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[v] = mark
	}
	return out
}
