package redact

import (
	"strconv"
	"strings"
)

// segment is one step of a dot path: a mapping key, or a list index when
// index ≥ 0.
type segment struct {
	key   string
	index int
}

// pathStack is the current location of a walk. It is rendered only when a
// secret or marker needs it, so a walk that finds nothing builds no strings.
type pathStack []segment

func (p *pathStack) pushKey(k string) { *p = append(*p, segment{key: k, index: -1}) }
func (p *pathStack) pushIndex(i int)  { *p = append(*p, segment{index: i}) }
func (p *pathStack) pop()             { *p = (*p)[:len(*p)-1] }

// String renders the dot path ("args.headers.0.token"); the root is "value".
func (p pathStack) String() string {
	if len(p) == 0 {
		return "value"
	}
	var b strings.Builder
	for i, s := range p {
		if i > 0 {
			b.WriteByte('.')
		}
		if s.index >= 0 {
			b.WriteString(strconv.Itoa(s.index))
		} else {
			b.WriteString(s.key)
		}
	}
	return b.String()
}
