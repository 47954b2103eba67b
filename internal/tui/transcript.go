package tui

// transcript is the scrollable list of entries. Only what is on screen is
// rendered (each entry caches its lines per width), so a long session
// costs a frame no more than a short one: the window is found by walking
// entries from the bottom, or from the scroll anchor, never by measuring
// the whole transcript.
type transcript struct {
	entries []*entry
	// follow keeps the newest line at the bottom of the window; when false
	// the window starts at the anchor line and new output does not move it.
	follow bool
	anchor pos
}

// pos is one line of the transcript: line of entry's block (its lines and
// the blank line after them).
type pos struct{ entry, line int }

// maxEntries bounds what the transcript keeps; the oldest entries go first.
const maxEntries = 5000

func newTranscript() transcript { return transcript{follow: true} }

func (t *transcript) add(e *entry) {
	t.entries = append(t.entries, e)
	if over := len(t.entries) - maxEntries; over > 0 {
		t.entries = append(t.entries[:0:0], t.entries[over:]...)
		if !t.follow {
			t.anchor.entry -= over
			if t.anchor.entry < 0 {
				t.anchor = pos{}
			}
		}
	}
}

func (t *transcript) clear() {
	t.entries = nil
	t.follow, t.anchor = true, pos{}
}

// block is entry i's lines followed by one blank separator line.
func (t *transcript) block(i int, rc *renderCtx) []string {
	return t.entries[i].block(rc)
}

// window returns the height lines on screen.
func (t *transcript) window(height int, rc *renderCtx) []string {
	if height <= 0 || len(t.entries) == 0 {
		return nil
	}
	if !t.follow {
		out := make([]string, 0, height)
		p := t.anchor
		for i := p.entry; i < len(t.entries) && len(out) < height; i++ {
			b := t.block(i, rc)
			start := 0
			if i == p.entry {
				start = min(p.line, len(b))
			}
			out = append(out, b[start:]...)
		}
		if len(out) >= height {
			return out[:height]
		}
		// The anchor came within a screen of the end: follow again.
		t.follow = true
	}
	var rev [][]string
	n := 0
	for i := len(t.entries) - 1; i >= 0 && n < height; i-- {
		b := t.block(i, rc)
		rev = append(rev, b)
		n += len(b)
	}
	out := make([]string, 0, n)
	for i := len(rev) - 1; i >= 0; i-- {
		out = append(out, rev[i]...)
	}
	if len(out) > height {
		out = out[len(out)-height:]
	}
	return out
}

// top is the position of the window's first line.
func (t *transcript) top(height int, rc *renderCtx) pos {
	if !t.follow {
		return t.anchor
	}
	// Walk up height lines from the end.
	p := pos{entry: len(t.entries), line: 0}
	return t.up(p, height, rc)
}

// up moves p up n lines, stopping at the first line.
func (t *transcript) up(p pos, n int, rc *renderCtx) pos {
	for n > 0 {
		if p.line >= n {
			p.line -= n
			return p
		}
		n -= p.line
		if p.entry == 0 {
			return pos{}
		}
		p.entry--
		p.line = len(t.block(p.entry, rc))
	}
	return p
}

// down moves p down n lines; ok is false when fewer than height lines
// would be left below it (the window belongs at the end).
func (t *transcript) down(p pos, n, height int, rc *renderCtx) (pos, bool) {
	p.line += n
	for p.entry < len(t.entries) {
		l := len(t.block(p.entry, rc))
		if p.line < l {
			break
		}
		p.line -= l
		p.entry++
	}
	if p.entry >= len(t.entries) {
		return p, false
	}
	// Are there height lines from p on?
	left := len(t.block(p.entry, rc)) - p.line
	for i := p.entry + 1; i < len(t.entries) && left < height; i++ {
		left += len(t.block(i, rc))
	}
	return p, left >= height
}

// scrollUp scrolls the window n lines towards older output.
func (t *transcript) scrollUp(n, height int, rc *renderCtx) {
	if len(t.entries) == 0 {
		return
	}
	p := t.up(t.top(height, rc), n, rc)
	// A transcript shorter than the window has nowhere to scroll.
	if _, ok := t.down(p, 0, height, rc); !ok {
		t.follow = true
		return
	}
	t.follow, t.anchor = false, p
}

// scrollDown scrolls the window n lines towards the newest output; at the
// end the window follows new output again.
func (t *transcript) scrollDown(n, height int, rc *renderCtx) {
	if t.follow {
		return
	}
	p, ok := t.down(t.anchor, n, height, rc)
	if !ok {
		t.follow = true
		return
	}
	t.anchor = p
}

// lastTool is the newest tool card, nil if none.
func (t *transcript) lastTool() *entry {
	for i := len(t.entries) - 1; i >= 0; i-- {
		if t.entries[i].kind == kindTool {
			return t.entries[i]
		}
	}
	return nil
}
