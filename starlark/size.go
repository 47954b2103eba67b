package starlark

import (
	"math"

	sl "go.starlark.net/starlark"
)

// Sizes charged to the allocation budget, in bytes: what the Go heap
// allocates for a value over its whole building, the copies left behind by
// growing it included (a list grows by a quarter at a time, so appending n
// elements copies about four times n slots). They were measured on this
// interpreter (see TestMemoryChargesCoverAllocation) and err on the high side.
const (
	valueBytes = 16                   // one Value in a tuple or an argument list
	elemBytes  = 96                   // one list element appended, growth copies included
	entryBytes = 240                  // one dict or set entry added, table growth included
	newBytes   = 32                   // the header of a new string, bytes, list or tuple
	pieceBytes = elemBytes + newBytes // one new string in a new list (split, splitlines)
	boundBytes = 48                   // the bound method x.m that a method call makes
	intFactor  = 4                    // a big-int result, its operands' copies and workspace
)

// built is the charge of a string of n bytes written into a growing buffer:
// the buffer's earlier, discarded sizes add up to about its last one.
func built(n int64) int64 { return addSat(mulSat(n, 2), newBytes) }

// renderFactor is what rendering a value costs per byte of its rendering:
// each string is quoted into a buffer of its own before the result's buffer
// takes it, and both grow by doubling (measured: 7.5 for str of a list of
// strings, 4.7 for json.encode).
const renderFactor = 8

// renderCost is the charge of rendering v with str(), %s or {}: a string is
// written as itself, anything else is rendered.
func renderCost(v sl.Value, limit int64) int64 {
	if s, ok := v.(sl.String); ok {
		return 2 * int64(len(s))
	}
	return mulSat(renderSize(v, limit), renderFactor)
}

// callBytes is the argument list of a call with n arguments.
func callBytes(n int) int64 { return int64(n) * valueBytes }

// addSat and mulSat are + and * on non-negative sizes, saturating at MaxInt64
// so a huge repetition count cannot wrap into a small charge.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func mulSat(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

// intBits is the bit length of i; small ints report 64.
func intBits(i sl.Int) int64 {
	if _, ok := i.Int64(); ok {
		return 64
	}
	return int64(i.BigInt().BitLen())
}

// intCost is the charge of a new int of bits bits: nothing for one of a few
// words (it is as cheap as any other step), its digits and workspace otherwise.
func intCost(bits int64) int64 {
	if bits <= 128 {
		return 0
	}
	return mulSat(bits/8, intFactor) + newBytes
}

// length is the number of elements x yields, counting at most max+1 of an
// iterable that does not know its length; 0 for a non-iterable (the operation
// then fails by itself).
func length(x sl.Value, max int64) int64 {
	if n := sl.Len(x); n >= 0 {
		return int64(n)
	}
	it, ok := x.(sl.Iterable)
	if !ok {
		return 0
	}
	iter := it.Iterate()
	defer iter.Done()
	var v sl.Value
	var n int64
	for n <= max && iter.Next(&v) {
		n++
	}
	return n
}

// quotedLen bounds the length of s quoted by repr or json.encode: printable
// ASCII stays one byte (two for a quote or backslash), a control byte may
// become \u00XX, any other byte \xNN.
func quotedLen(s string) int64 {
	n := int64(2)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			n += 2
		case c >= 0x20 && c < 0x7f:
			n++
		case c < 0x80:
			n += 6
		default:
			n += 4
		}
	}
	return n
}

// maxWalkDepth bounds the nesting a walk follows. A deeper value counts as
// larger than any budget: rendering it would recurse that deep on the Go
// stack, which no budget can stop once it overflows.
const maxWalkDepth = 1000

// sizer walks a value for an estimate, stopping once it passes limit; path
// holds the mutable containers being walked so a cycle counts once. nodes and
// deepest describe the walked part's shape.
type sizer struct {
	limit   int64
	n       int64
	path    []sl.Value
	depth   int64
	deepest int64
	nodes   int64
}

func (s *sizer) over() bool { return s.n > s.limit }

// down enters one level of nesting; up leaves it.
func (s *sizer) down() {
	s.nodes++
	s.depth++
	s.deepest = max(s.deepest, s.depth)
	if s.depth > maxWalkDepth {
		s.n = math.MaxInt64
	}
}

func (s *sizer) up() { s.depth-- }

func (s *sizer) add(n int64) { s.n = addSat(s.n, n) }

func (s *sizer) enter(v sl.Value) bool {
	for _, p := range s.path {
		if p == v {
			return false
		}
	}
	s.path = append(s.path, v)
	return true
}

func (s *sizer) leave() { s.path = s.path[:len(s.path)-1] }

// renderSize bounds len(repr(v)), and so len(str(v)), of json.encode(v) and of
// what a %s or {} directive makes of v; the result passes limit only if the
// rendering would.
func renderSize(v sl.Value, limit int64) int64 {
	s := sizer{limit: limit}
	s.render(v)
	return s.n
}

func (s *sizer) render(v sl.Value) {
	if s.over() {
		return
	}
	s.down()
	defer s.up()
	switch x := v.(type) {
	case sl.NoneType, sl.Bool:
		s.add(5)
	case sl.Int:
		s.add(intBits(x)/3 + 2)
	case sl.Float:
		s.add(32)
	case sl.String:
		s.add(quotedLen(string(x)))
	case sl.Bytes:
		s.add(quotedLen(string(x)) + 1)
	case sl.Tuple:
		s.add(3)
		for _, e := range x {
			s.add(2)
			if s.render(e); s.over() {
				return
			}
		}
	case *sl.List:
		s.add(5)
		if !s.enter(x) {
			return
		}
		defer s.leave()
		for i := range x.Len() {
			s.add(2)
			if s.render(x.Index(i)); s.over() {
				return
			}
		}
	case *sl.Dict:
		s.add(5)
		if !s.enter(x) {
			return
		}
		defer s.leave()
		s.entries(x, 4, (*sizer).render)
	case *sl.Set:
		s.add(7)
		iter := x.Iterate()
		defer iter.Done()
		var e sl.Value
		for !s.over() && iter.Next(&e) {
			s.add(2)
			s.render(e)
		}
	default:
		// Functions, built-ins, ranges, Objects: a short description.
		s.add(int64(len(v.String())))
	}
}

// dataSize bounds what building v costs: its strings, its slots and entries.
// It is the charge of a value a Host built-in returns.
func dataSize(v sl.Value, limit int64) int64 {
	s := sizer{limit: limit}
	s.data(v)
	return s.n
}

func (s *sizer) data(v sl.Value) {
	if s.over() {
		return
	}
	s.down()
	defer s.up()
	switch x := v.(type) {
	case sl.String:
		s.add(int64(len(x)) + newBytes)
	case sl.Bytes:
		s.add(int64(len(x)) + newBytes)
	case sl.Int:
		s.add(intCost(intBits(x)) + valueBytes)
	case sl.Tuple:
		s.add(newBytes)
		for _, e := range x {
			s.add(valueBytes)
			if s.data(e); s.over() {
				return
			}
		}
	case *sl.List:
		s.add(newBytes)
		if !s.enter(x) {
			return
		}
		defer s.leave()
		for i := range x.Len() {
			s.add(valueBytes)
			if s.data(x.Index(i)); s.over() {
				return
			}
		}
	case *sl.Dict:
		s.add(newBytes)
		if !s.enter(x) {
			return
		}
		defer s.leave()
		s.entries(x, entryBytes, (*sizer).data)
	case *sl.Set:
		s.add(newBytes)
		iter := x.Iterate()
		defer iter.Done()
		var e sl.Value
		for !s.over() && iter.Next(&e) {
			s.add(entryBytes)
			s.data(e)
		}
	default:
		s.add(valueBytes)
	}
}

// entries walks the keys and values of d with walk, adding per for each entry.
// It iterates rather than calling Items, which would copy the table.
func (s *sizer) entries(d *sl.Dict, per int64, walk func(*sizer, sl.Value)) {
	iter := d.Iterate()
	defer iter.Done()
	var k sl.Value
	for !s.over() && iter.Next(&k) {
		s.add(per)
		walk(s, k)
		if v, found, _ := d.Get(k); found {
			walk(s, v)
		}
	}
}
