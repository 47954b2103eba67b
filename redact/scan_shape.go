package redact

import (
	"math"
	"regexp"
	"strings"
	"sync"
)

// shapeRule is one credential format of shapeRules.
type shapeRule struct {
	id       string   // gitleaks' rule id; the secret is named UPPER(id) with '-' as '_'
	prefixes []string // literals a token of this shape starts with
	pattern  string   // the whole token, prefix included; group 1, if any, is the secret
	maxLen   int      // longest token examined; 0 means shapeWindow
}

// shapeWindow bounds the text a bounded pattern is matched against; every
// bounded pattern of shapeRules is shorter.
const shapeWindow = 4096

// shapeMinEntropy is the Shannon entropy, in bits per character, below
// which a match is taken for a placeholder ("ghp_xxxx…", "AKIAAAAA…")
// rather than a credential; gitleaks uses the same bound for most rules.
const shapeMinEntropy = 3.0

// compiledShape is a rule ready to match: its pattern anchored at the
// start, its name and source precomputed.
type compiledShape struct {
	re           func() *regexp.Regexp // compiled on the rule's first candidate
	name, source string
	maxLen       int
}

// shapeIndex finds the rules that may start at a position with one table
// look-up per byte and a second only where a prefix's first two bytes
// occur, so text without candidates costs no regular-expression work.
type shapeIndex struct {
	pairs   [256][4]uint64 // bit b of pairs[c] set: some prefix starts with c, b
	buckets [256][]shapeCandidate
}

type shapeCandidate struct {
	prefix string
	rule   *compiledShape
}

var shapes = sync.OnceValue(func() *shapeIndex { return buildShapeIndex(shapeRules) })

func buildShapeIndex(rules []shapeRule) *shapeIndex {
	ix := &shapeIndex{}
	for _, r := range rules {
		c := &compiledShape{
			// Most text never reaches most rules: a process pays for a
			// rule's expression only once a candidate prefix of it occurs.
			re:     sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:` + r.pattern + `)`) }),
			name:   strings.ToUpper(strings.ReplaceAll(r.id, "-", "_")),
			source: "shape:" + r.id,
			maxLen: r.maxLen,
		}
		if c.maxLen == 0 {
			c.maxLen = shapeWindow
		}
		for _, p := range r.prefixes {
			ix.pairs[p[0]][p[1]>>6] |= 1 << (p[1] & 63)
			ix.buckets[p[0]] = append(ix.buckets[p[0]], shapeCandidate{prefix: p, rule: c})
		}
	}
	return ix
}

// scanShapes records every token of s that has one of the credential
// shapes. A token must start at a boundary (the start of s or after a byte
// that is not an ASCII letter or digit), match its rule's pattern there,
// end at a boundary (the end of s or before a byte that is not a letter,
// digit, '_' or '-'), and have at least shapeMinEntropy bits per character.
// A longer run of token characters is not cut down to fit a shape: it is
// some other identifier. At each position the first matching rule wins and
// the scan resumes after the token.
func scanShapes(d *discoverer, s string) { shapes().scan(d, s) }

func (ix *shapeIndex) scan(d *discoverer, s string) {
	// Every prefix has two bytes or more, so the last byte starts none.
	for i := 0; i < len(s)-1; i++ {
		if !ix.hasPair(s[i], s[i+1]) || (i > 0 && isAlnum(s[i-1])) {
			continue
		}
		if end := ix.match(d, s, i); end > i {
			i = end - 1
		}
	}
}

// hasPair reports whether some prefix starts with the bytes a, b.
func (ix *shapeIndex) hasPair(a, b byte) bool { return ix.pairs[a][b>>6]&(1<<(b&63)) != 0 }

// match tries the rules whose prefix occurs at s[i:] and records the first
// token found; it returns the end of that token, or i.
func (ix *shapeIndex) match(d *discoverer, s string, i int) int {
	for _, cand := range ix.buckets[s[i]] {
		if !strings.HasPrefix(s[i:], cand.prefix) {
			continue
		}
		r := cand.rule
		window := s[i:min(len(s), i+r.maxLen)]
		loc := r.re().FindStringSubmatchIndex(window)
		if loc == nil {
			continue
		}
		end := i + loc[1]
		if end < len(s) && isTokenByte(s[end]) {
			continue
		}
		value := window[loc[0]:loc[1]]
		if len(loc) >= 4 && loc[2] >= 0 {
			value = window[loc[2]:loc[3]]
		}
		if entropy(value) < shapeMinEntropy {
			continue
		}
		d.add(value, r.name, sourceParts{kind: r.source})
		return end
	}
	return i
}

func isAlnum(c byte) bool     { return isLetter(c) || isDigit(c) }
func isTokenByte(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h, n := 0.0, float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
