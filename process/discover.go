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
// It works on whole lines: of the bytes it is given, it consumes only those
// up to the last line break (or all but discoverLineMax bytes of a longer
// unfinished line) and holds back the rest, so a value discovered in a line
// is known before any byte of that line is forwarded. When a line shows new
// values, the current exact-value stage is flushed (everything it holds
// back ends at a line boundary the new values cannot span, as discovered
// values hold no line break) and replaced by one that knows the old values
// and the new.
//
// A value that appeared in an earlier line than the one it is discovered in
// has already been forwarded; only later occurrences are redacted.
type discoveringRedactor struct {
	discover func(text string) map[string]string
	repl     map[string]string
	red      *streamRedactor
	redHeld  int // bytes at the front of the next data that red handed back
	mk       func(map[string]string) *streamRedactor
}

func newDiscoveringRedactor(mk func(map[string]string) *streamRedactor, repl map[string]string, discover func(string) map[string]string) *discoveringRedactor {
	repl = maps.Clone(repl)
	if repl == nil {
		repl = map[string]string{}
	}
	return &discoveringRedactor{discover: discover, repl: repl, red: mk(repl), mk: mk}
}

// holdMax is the most process may hand back.
func (d *discoveringRedactor) holdMax() int { return d.red.holdMax() + discoverLineMax }

// process follows streamRedactor.process: data is what it handed back last
// time followed by new bytes; it returns how many bytes at the end of data
// it did not consume.
func (d *discoveringRedactor) process(data []byte, final bool) (held int) {
	cut := len(data)
	if !final {
		if i := bytes.LastIndexByte(data[d.redHeld:], '\n'); i >= 0 {
			cut = d.redHeld + i + 1
		} else {
			cut = d.redHeld
		}
		if len(data)-cut > discoverLineMax {
			cut = len(data) - discoverLineMax
		}
	}
	start := d.redHeld
	if found := d.newValues(data[start:cut]); len(found) > 0 {
		d.red.process(data[:start], true) // flush at a line boundary
		maps.Copy(d.repl, found)
		d.red = d.mk(d.repl)
		data, cut = data[start:], cut-start
	}
	d.redHeld = d.red.process(data[:cut], final)
	return d.redHeld + len(data) - cut
}

// newValues returns the secrets in text that are not known yet.
func (d *discoveringRedactor) newValues(text []byte) map[string]string {
	if len(text) == 0 {
		return nil
	}
	var out map[string]string
	for v, mark := range d.discover(string(text)) {
		if _, known := d.repl[v]; v == "" || known {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[v] = mark
	}
	return out
}
