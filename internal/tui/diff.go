package tui

import "strings"

// maxDiffCells bounds the line diff's table (old lines × new lines); past
// it the change is shown as all old lines removed and all new ones added.
const maxDiffCells = 250_000

// diffLines is a line diff of old and new, "-" lines in red and "+" lines
// in green, unchanged lines dimmed.
func diffLines(th *theme, old, nw string) []string {
	a, b := splitLines(old), splitLines(nw)
	var out []string
	emit := func(op byte, s string) {
		switch op {
		case '-':
			out = append(out, th.diffDel.Render("- "+s))
		case '+':
			out = append(out, th.diffAdd.Render("+ "+s))
		default:
			out = append(out, th.faint.Render("  "+s))
		}
	}
	if len(a)*len(b) > maxDiffCells {
		for _, l := range a {
			emit('-', l)
		}
		for _, l := range b {
			emit('+', l)
		}
		return out
	}
	// Longest common subsequence, then a walk that emits the edit script.
	lcs := make([][]int32, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			emit(' ', a[i])
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			emit('-', a[i])
			i++
		default:
			emit('+', b[j])
			j++
		}
	}
	return out
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// unifiedDiff colours a unified diff a tool produced.
func unifiedDiff(th *theme, diff string) []string {
	lines := splitLines(diff)
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "@@"):
			out = append(out, th.diffAt.Render(l))
		case strings.HasPrefix(l, "+"):
			out = append(out, th.diffAdd.Render(l))
		case strings.HasPrefix(l, "-"):
			out = append(out, th.diffDel.Render(l))
		default:
			out = append(out, th.faint.Render(l))
		}
	}
	return out
}
