package redact

import (
	"cmp"
	"slices"
	"strings"
)

// matcher replaces exact values with markers. At each position the
// leftmost occurrence of any value wins; among values starting at the same
// position the one earlier in vals (the longest, by construction) wins.
// Matches never overlap, so the output holds no value that lay wholly
// inside an unreplaced stretch of the input.
type matcher struct {
	vals   []string
	marks  []string
	maxLen int
}

// newMatcher builds a matcher from value → marker pairs, longest value
// first, ties broken by value so the order is deterministic.
func newMatcher(pairs map[string]string) *matcher {
	m := &matcher{}
	keys := make([]string, 0, len(pairs))
	for v := range pairs {
		if v != "" {
			keys = append(keys, v)
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(len(b), len(a)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for _, k := range keys {
		m.vals = append(m.vals, k)
		m.marks = append(m.marks, pairs[k])
		m.maxLen = max(m.maxLen, len(k))
	}
	return m
}

// replaceString returns s with every match replaced.
func (m *matcher) replaceString(s string) string {
	if m == nil || len(m.vals) == 0 || len(s) == 0 {
		return s
	}
	// Cheap rejection first: most strings hold no secret at all.
	first := -1
	for i, v := range m.vals {
		if strings.Contains(s, v) {
			first = i
			break
		}
	}
	if first < 0 {
		return s
	}
	out, _ := m.scan(make([]byte, 0, len(s)), s, len(s))
	return string(out)
}

// scan appends s to dst with matches replaced, deciding only matches that
// start before limit. It returns the extended dst and the offset where it
// stopped: everything before that offset is final, the rest (shorter than
// the longest value when limit = len(s)−maxLen+1) must wait for more input.
// A match that starts before limit lies wholly inside s, so every decision
// made here is the one a scan of the complete input would make.
func (m *matcher) scan(dst []byte, s string, limit int) ([]byte, int) {
	limit = min(limit, len(s))
	next := make([]int, len(m.vals))
	for i, v := range m.vals {
		next[i] = strings.Index(s, v)
	}
	cur := 0
	for {
		best := -1
		for i, p := range next {
			if p >= 0 && (best < 0 || p < next[best]) {
				best = i
			}
		}
		if best < 0 || next[best] >= limit {
			end := max(limit, cur)
			return append(dst, s[cur:end]...), end
		}
		start := next[best]
		dst = append(dst, s[cur:start]...)
		dst = append(dst, m.marks[best]...)
		cur = start + len(m.vals[best])
		for i, p := range next {
			if p >= 0 && p < cur {
				if q := strings.Index(s[cur:], m.vals[i]); q >= 0 {
					next[i] = cur + q
				} else {
					next[i] = -1
				}
			}
		}
	}
}
