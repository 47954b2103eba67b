package core

import (
	"fmt"
	"strconv"
)

// firstLine returns a if it is a line number, else b.
func firstLine(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

func itoa(i int) string { return strconv.Itoa(i) }

// quoteShort quotes s for a message, bounded in length.
func quoteShort(s string) string {
	const max = 80
	r := []rune(s)
	if len(r) > max {
		return fmt.Sprintf("%q…", string(r[:max]))
	}
	return fmt.Sprintf("%q", s)
}
