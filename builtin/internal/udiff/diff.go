package udiff

import (
	"fmt"
	"strings"
)

// maxEditDistance bounds the line edits the diff searches for a minimal
// script; a bigger change is shown as one replacement of the changed
// region, which is still a correct diff.
const maxEditDistance = 1000

// diffContext is the number of unchanged lines around each hunk.
const diffContext = 3

// opcode is one step of an edit script over lines a[i1:i2] and b[j1:j2],
// as Python's difflib names them: 'e'qual, 'r'eplace, 'd'elete, 'i'nsert.
type opcode struct {
	tag            byte
	i1, i2, j1, j2 int
}

// Unified returns the unified diff of a and b (lines without their
// terminators) in the form of difflib.unified_diff(..., lineterm=""),
// lines joined by "\n"; "" when they are equal.
func Unified(fromFile, toFile string, a, b []string) string {
	groups := groupOpcodes(diffOpcodes(a, b), diffContext)
	if len(groups) == 0 {
		return ""
	}
	var out []string
	out = append(out, "--- "+fromFile, "+++ "+toFile)
	for _, g := range groups {
		first, last := g[0], g[len(g)-1]
		out = append(out, fmt.Sprintf("@@ -%s +%s @@", unifiedRange(first.i1, last.i2), unifiedRange(first.j1, last.j2)))
		for _, op := range g {
			if op.tag == 'e' {
				for _, l := range a[op.i1:op.i2] {
					out = append(out, " "+l)
				}
				continue
			}
			if op.tag == 'r' || op.tag == 'd' {
				for _, l := range a[op.i1:op.i2] {
					out = append(out, "-"+l)
				}
			}
			if op.tag == 'r' || op.tag == 'i' {
				for _, l := range b[op.j1:op.j2] {
					out = append(out, "+"+l)
				}
			}
		}
	}
	return strings.Join(out, "\n")
}

// unifiedRange formats a hunk range as difflib does: "start,length",
// "start" for one line, "start-1,0" for none.
func unifiedRange(start, stop int) string {
	begin, length := start+1, stop-start
	switch length {
	case 1:
		return fmt.Sprintf("%d", begin)
	case 0:
		begin--
	}
	return fmt.Sprintf("%d,%d", begin, length)
}

// groupOpcodes splits an edit script into hunks with n lines of context,
// as difflib.SequenceMatcher.get_grouped_opcodes does.
func groupOpcodes(codes []opcode, n int) [][]opcode {
	if len(codes) == 0 {
		codes = []opcode{{'e', 0, 1, 0, 1}}
	}
	codes = append([]opcode(nil), codes...)
	if c := &codes[0]; c.tag == 'e' {
		c.i1, c.j1 = max(c.i1, c.i2-n), max(c.j1, c.j2-n)
	}
	if c := &codes[len(codes)-1]; c.tag == 'e' {
		c.i2, c.j2 = min(c.i2, c.i1+n), min(c.j2, c.j1+n)
	}
	var groups [][]opcode
	var group []opcode
	for _, c := range codes {
		if c.tag == 'e' && c.i2-c.i1 > 2*n {
			group = append(group, opcode{'e', c.i1, min(c.i2, c.i1+n), c.j1, min(c.j2, c.j1+n)})
			groups = append(groups, group)
			group = nil
			c.i1, c.j1 = max(c.i1, c.i2-n), max(c.j1, c.j2-n)
		}
		group = append(group, c)
	}
	if len(group) > 0 && !(len(group) == 1 && group[0].tag == 'e') {
		groups = append(groups, group)
	}
	return groups
}

// diffOpcodes returns an edit script from a to b: the common prefix and
// suffix, and between them a minimal script (Myers) or, past
// maxEditDistance edits, one replacement.
func diffOpcodes(a, b []string) []opcode {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []opcode
	add := func(tag byte, i1, i2, j1, j2 int) {
		if i1 == i2 && j1 == j2 {
			return
		}
		if n := len(ops); n > 0 && tag == 'e' && ops[n-1].tag == 'e' {
			ops[n-1].i2, ops[n-1].j2 = i2, j2
			return
		}
		ops = append(ops, opcode{tag, i1, i2, j1, j2})
	}
	change := func(i1, i2, j1, j2 int) {
		switch {
		case i1 < i2 && j1 < j2:
			add('r', i1, i2, j1, j2)
		case i1 < i2:
			add('d', i1, i2, j1, j2)
		case j1 < j2:
			add('i', i1, i2, j1, j2)
		}
	}
	add('e', 0, pre, 0, pre)
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]
	x, y := 0, 0
	if matches, ok := myers(internLines(am, bm)); ok {
		for _, m := range matches {
			change(pre+x, pre+m[0], pre+y, pre+m[1])
			add('e', pre+m[0], pre+m[0]+1, pre+m[1], pre+m[1]+1)
			x, y = m[0]+1, m[1]+1
		}
	}
	change(pre+x, pre+len(am), pre+y, pre+len(bm))
	add('e', len(a)-suf, len(a), len(b)-suf, len(b))
	return ops
}

// internLines maps equal lines of a and b to equal integers.
func internLines(a, b []string) ([]int32, []int32) {
	ids := make(map[string]int32, len(a)+len(b))
	conv := func(lines []string) []int32 {
		out := make([]int32, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	return conv(a), conv(b)
}

// myers returns the matched line pairs of a shortest edit script from a
// to b, in order, or ok=false when it needs more than maxEditDistance
// edits. It keeps one frontier row per edit, so memory is O(D²).
func myers(a, b []int32) (matches [][2]int, ok bool) {
	n, m := len(a), len(b)
	limit := min(n+m, maxEditDistance)
	off := limit + 1
	v := make([]int, 2*limit+3)
	// trace[d] holds v[k] for k in [-d-1, d+1] as it was when round d began.
	var trace [][]int32
	for d := 0; d <= limit; d++ {
		row := make([]int32, 2*d+3)
		for i := range row {
			row[i] = int32(v[off-d-1+i])
		}
		trace = append(trace, row)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, n, m), true
			}
		}
	}
	return nil, false
}

func backtrack(trace [][]int32, n, m int) [][2]int {
	var out [][2]int
	x, y := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		row := trace[d]
		at := func(k int) int { return int(row[k+d+1]) }
		k := x - y
		prevK := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		}
		prevX := at(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x--
			y--
			out = append(out, [2]int{x, y})
		}
		x, y = prevX, prevY
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// SplitLines splits text into lines without their terminators ("\n",
// "\r\n" or "\r"); a final terminator does not start another line.
func SplitLines(text string) []string {
	var lines []string
	for len(text) > 0 {
		i := strings.IndexAny(text, "\r\n")
		if i < 0 {
			lines = append(lines, text)
			break
		}
		lines = append(lines, text[:i])
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		text = text[i+1:]
	}
	return lines
}

// Text is the unified diff of two versions of the file show, invalid
// UTF-8 shown as U+FFFD.
func Text(show, before, after string) string {
	return Unified("a/"+show, "b/"+show,
		SplitLines(strings.ToValidUTF8(before, "\uFFFD")),
		SplitLines(strings.ToValidUTF8(after, "\uFFFD")))
}
