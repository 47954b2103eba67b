package starlark

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"go.starlark.net/lib/json"
	"go.starlark.net/lib/math"
	sl "go.starlark.net/starlark"
)

// cost estimates what one call of a built-in allocates, before it runs. recv
// is the receiver of a method (nil for a function); limit is what the budget
// has left, so a walk may stop once past it. An argument the built-in would
// reject costs nothing: the call then fails by itself.
type cost func(recv sl.Value, args sl.Tuple, kwargs []sl.Tuple, limit int64) int64

// free is the cost of a built-in that allocates a bounded amount (len, hash,
// min) or only views its operand (strip shares the string's bytes).
func free(sl.Value, sl.Tuple, []sl.Tuple, int64) int64 { return 0 }

func fixed(n int64) cost {
	return func(sl.Value, sl.Tuple, []sl.Tuple, int64) int64 { return n }
}

// each is the cost of a built-in that builds per bytes for every element of
// its first argument (set, extend, enumerate).
func each(per int64) cost {
	return func(_ sl.Value, args sl.Tuple, _ []sl.Tuple, limit int64) int64 {
		if len(args) == 0 {
			return newBytes
		}
		return addSat(mulSat(length(args[0], limit/per), per), newBytes)
	}
}

// sequence is the cost of list, tuple, sorted and reversed: one slot per
// element when the operand knows its length (the result is allocated once),
// an appended element otherwise.
func sequence(slots int64) cost {
	return func(_ sl.Value, args sl.Tuple, _ []sl.Tuple, limit int64) int64 {
		if len(args) == 0 {
			return newBytes
		}
		per := slots * valueBytes
		if sl.Len(args[0]) < 0 {
			per = slots * elemBytes
		}
		return addSat(mulSat(length(args[0], limit/per), per), newBytes)
	}
}

// functionCosts are the language's built-in functions and the json and math
// modules, by identity. A built-in missing here is a Host built-in.
var functionCosts = func() map[*sl.Builtin]cost {
	named := map[string]cost{
		"bytes": bytesCost, "dict": dictCost, "enumerate": each(elemBytes + newBytes + 2*valueBytes),
		"fail": printCost, "list": sequence(1), "print": printCost, "repr": reprCost,
		"reversed": sequence(1), "set": each(entryBytes), "sorted": sequence(3),
		"str": strCost, "tuple": sequence(1), "zip": zipCost,
	}
	m := make(map[*sl.Builtin]cost)
	for name, v := range sl.Universe {
		if b, ok := v.(*sl.Builtin); ok {
			if c, ok := named[name]; ok {
				m[b] = c
			} else {
				m[b] = free
			}
		}
	}
	for _, v := range math.Module.Members {
		if b, ok := v.(*sl.Builtin); ok {
			m[b] = free
		}
	}
	for name, c := range map[string]cost{"encode": reprCost, "encode_indent": jsonEncodeIndentCost, "decode": jsonDecodeCost, "indent": jsonIndentCost} {
		m[json.Module.Members[name].(*sl.Builtin)] = c
	}
	return m
}()

var universeGetattr = sl.Universe["getattr"].(*sl.Builtin)

// methodCosts are the methods of the built-in types by receiver type and name;
// a method missing here allocates a bounded amount.
var methodCosts = map[string]map[string]cost{
	"string": {
		"join": joinCost, "replace": replaceCost, "format": formatMethodCost,
		"split": splitCost, "rsplit": splitCost, "splitlines": splitlinesCost,
		"upper": caseCost, "lower": caseCost, "title": caseCost, "capitalize": caseCost,
		"partition": fixed(3*pieceBytes + newBytes), "rpartition": fixed(3*pieceBytes + newBytes),
	},
	"list": {"append": fixed(elemBytes), "insert": fixed(elemBytes), "extend": each(elemBytes)},
	"dict": {
		"setdefault": fixed(entryBytes), "update": dictCost,
		"items": lenCost(elemBytes + newBytes + 2*valueBytes), "keys": lenCost(elemBytes), "values": lenCost(elemBytes),
	},
	"set": {
		"add": fixed(entryBytes), "update": setCost(false),
		"union": setCost(true), "intersection": setCost(true), "difference": setCost(true),
		"symmetric_difference": setCost(true), "issubset": setCost(false), "issuperset": setCost(false),
	},
}

// methodCost returns the cost of the built-in method b bound to recv, and
// whether recv is a built-in type at all.
func methodCost(recv sl.Value, name string) (cost, bool) {
	var typ string
	switch recv.(type) {
	case sl.String:
		typ = "string"
	case *sl.List:
		typ = "list"
	case *sl.Dict:
		typ = "dict"
	case *sl.Set:
		typ = "set"
	case sl.Bytes:
		return free, true
	default:
		return nil, false
	}
	if c, ok := methodCosts[typ][name]; ok {
		return c, true
	}
	return free, true
}

func kwarg(kwargs []sl.Tuple, name string) sl.Value {
	for _, kv := range kwargs {
		if k, ok := kv[0].(sl.String); ok && string(k) == name {
			return kv[1]
		}
	}
	return nil
}

func str(v sl.Value) (string, bool) {
	s, ok := v.(sl.String)
	return string(s), ok
}

func bytesCost(_ sl.Value, args sl.Tuple, _ []sl.Tuple, limit int64) int64 {
	if len(args) == 0 {
		return newBytes
	}
	switch x := args[0].(type) {
	case sl.Bytes:
		return 0
	case sl.String:
		return int64(len(x)) + newBytes
	}
	return length(args[0], limit) + newBytes
}

func dictCost(_ sl.Value, args sl.Tuple, kwargs []sl.Tuple, limit int64) int64 {
	n := int64(len(kwargs))
	if len(args) > 0 {
		n = addSat(n, length(args[0], limit/entryBytes))
	}
	return addSat(mulSat(n, entryBytes), newBytes)
}

func lenCost(per int64) cost {
	return func(recv sl.Value, _ sl.Tuple, _ []sl.Tuple, _ int64) int64 {
		return addSat(mulSat(int64(sl.Len(recv)), per), newBytes)
	}
}

// setCost: a set method builds entries for every element of its arguments,
// and for the receiver's own when it returns a new set.
func setCost(copies bool) cost {
	return func(recv sl.Value, args sl.Tuple, _ []sl.Tuple, limit int64) int64 {
		var n int64
		if copies {
			n = int64(sl.Len(recv))
		}
		for _, a := range args {
			n = addSat(n, length(a, limit/entryBytes))
		}
		return addSat(mulSat(n, entryBytes), newBytes)
	}
}

func zipCost(_ sl.Value, args sl.Tuple, _ []sl.Tuple, limit int64) int64 {
	if len(args) == 0 {
		return newBytes
	}
	per := elemBytes + newBytes + valueBytes*int64(len(args))
	n := length(args[0], limit/per)
	for _, a := range args[1:] {
		n = min(n, length(a, limit/per))
	}
	return addSat(mulSat(n, per), newBytes)
}

// printCost covers print and fail: str of each argument and the separators.
func printCost(_ sl.Value, args sl.Tuple, kwargs []sl.Tuple, limit int64) int64 {
	sep := int64(1)
	if s, ok := str(kwarg(kwargs, "sep")); ok {
		sep = int64(len(s))
	}
	var n int64
	for _, a := range args {
		n = addSat(n, addSat(renderCost(a, limit), sep))
		if n > limit {
			break
		}
	}
	return built(n)
}

// reprCost also prices json.encode: both render their argument once.
func reprCost(_ sl.Value, args sl.Tuple, _ []sl.Tuple, limit int64) int64 {
	if len(args) != 1 {
		return 0
	}
	return addSat(mulSat(renderSize(args[0], limit), renderFactor), newBytes)
}

func strCost(_ sl.Value, args sl.Tuple, _ []sl.Tuple, limit int64) int64 {
	if len(args) != 1 {
		return 0
	}
	if _, ok := args[0].(sl.String); ok {
		return 0 // str of a string is the string
	}
	return renderCost(args[0], limit) + newBytes
}

func joinCost(recv sl.Value, args sl.Tuple, _ []sl.Tuple, limit int64) int64 {
	sep, _ := str(recv)
	if len(args) != 1 {
		return 0
	}
	it, ok := args[0].(sl.Iterable)
	if !ok {
		return 0
	}
	iter := it.Iterate()
	defer iter.Done()
	var n int64
	var v sl.Value
	for first := true; n <= limit && iter.Next(&v); first = false {
		s, ok := str(v)
		if !ok {
			return 0 // join fails on the element
		}
		if !first {
			n = addSat(n, int64(len(sep)))
		}
		n = addSat(n, int64(len(s)))
	}
	return built(n)
}

func replaceCost(recv sl.Value, args sl.Tuple, kwargs []sl.Tuple, _ int64) int64 {
	s, _ := str(recv)
	if len(args) < 2 {
		return 0
	}
	old, ok1 := str(args[0])
	repl, ok2 := str(args[1])
	if !ok1 || !ok2 {
		return 0
	}
	n := int64(len(s)) + newBytes
	if len(repl) <= len(old) {
		return n
	}
	occ := int64(strings.Count(s, old))
	count := kwarg(kwargs, "count")
	if len(args) > 2 {
		count = args[2]
	}
	if c, ok := count.(sl.Int); ok {
		if c, ok := c.Int64(); ok && c >= 0 {
			occ = min(occ, c)
		}
	}
	return addSat(n, mulSat(occ, int64(len(repl)-len(old))))
}

// formatMethodCost: every {} may render the largest argument.
func formatMethodCost(recv sl.Value, args sl.Tuple, kwargs []sl.Tuple, limit int64) int64 {
	f, _ := str(recv)
	var largest int64
	for _, a := range args {
		largest = max(largest, renderCost(a, limit))
	}
	for _, kv := range kwargs {
		largest = max(largest, renderCost(kv[1], limit))
	}
	fields := int64(strings.Count(f, "{"))
	return built(addSat(int64(len(f)), mulSat(fields, largest)))
}

// percentCost is the cost of s % y: the format plus each operand rendered
// (a mapping's values as often as the format has directives).
func percentCost(s string, y sl.Value, limit int64) int64 {
	n := int64(len(s))
	switch y := y.(type) {
	case sl.Tuple:
		for _, e := range y {
			n = addSat(n, renderCost(e, limit))
		}
		return built(n)
	case sl.Mapping:
		var largest int64
		if it, ok := y.(sl.IterableMapping); ok {
			for _, kv := range it.Items() {
				largest = max(largest, renderCost(kv[1], limit))
			}
		}
		return built(addSat(n, mulSat(int64(strings.Count(s, "%")), largest)))
	}
	return built(addSat(n, renderCost(y, limit)))
}

func splitCost(recv sl.Value, args sl.Tuple, kwargs []sl.Tuple, _ int64) int64 {
	s, _ := str(recv)
	sep := kwarg(kwargs, "sep")
	if len(args) > 0 {
		sep = args[0]
	}
	var pieces int64
	if sepStr, ok := str(sep); ok {
		if sepStr == "" {
			return 0 // split fails on an empty separator
		}
		pieces = int64(strings.Count(s, sepStr)) + 1
	} else {
		pieces = fields(s)
	}
	maxsplit := kwarg(kwargs, "maxsplit")
	if len(args) > 1 {
		maxsplit = args[1]
	}
	if m, ok := maxsplit.(sl.Int); ok {
		if m, ok := m.Int64(); ok && m >= 0 && m+1 < pieces {
			pieces = m + 1
		}
	}
	return addSat(mulSat(pieces, pieceBytes), newBytes)
}

// fields counts the whitespace-separated fields of s (split with no separator).
func fields(s string) int64 {
	var n int64
	inField := false
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		i += size
		space := unicode.IsSpace(r)
		if !space && !inField {
			n++
		}
		inField = !space
	}
	return n
}

func splitlinesCost(recv sl.Value, _ sl.Tuple, _ []sl.Tuple, _ int64) int64 {
	s, _ := str(recv)
	lines := int64(strings.Count(s, "\n")+strings.Count(s, "\r")) + 1
	return addSat(mulSat(lines, pieceBytes), newBytes)
}

// caseCost: a case mapping may lengthen a rune's encoding by half.
func caseCost(recv sl.Value, _ sl.Tuple, _ []sl.Tuple, _ int64) int64 {
	s, _ := str(recv)
	return 2*int64(len(s)) + newBytes
}

func jsonEncodeIndentCost(_ sl.Value, args sl.Tuple, kwargs []sl.Tuple, limit int64) int64 {
	if len(args) != 1 {
		return 0
	}
	s := sizer{limit: limit}
	s.render(args[0])
	if s.over() {
		return s.n
	}
	// Encoding, then indenting the encoding as json.indent would: each value
	// opens at most two lines (its own and a closing bracket's).
	return addSat(mulSat(s.n, renderFactor), indentCost(s.n, 2*s.nodes, s.deepest, kwargs))
}

func jsonIndentCost(_ sl.Value, args sl.Tuple, kwargs []sl.Tuple, _ int64) int64 {
	if len(args) != 1 {
		return 0
	}
	s, ok := str(args[0])
	if !ok {
		return 0
	}
	tokens, depth := jsonShape(s)
	return indentCost(int64(len(s)), tokens, depth, kwargs)
}

// indentCost bounds json.indent of an encoding of n bytes with tokens
// structural characters nested at most depth deep: each token may start a line
// with the prefix and depth indents.
func indentCost(n, tokens, depth int64, kwargs []sl.Tuple) int64 {
	prefix, _ := str(kwarg(kwargs, "prefix"))
	indent := "\t"
	if s, ok := str(kwarg(kwargs, "indent")); ok {
		indent = s
	}
	line := addSat(1+int64(len(prefix)), mulSat(int64(len(indent)), depth))
	return built(addSat(n, mulSat(tokens, line)))
}

// jsonShape counts the structural characters of a JSON text outside its
// strings and its deepest nesting.
func jsonShape(s string) (tokens, depth int64) {
	var d int64
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			tokens++
			d++
			depth = max(depth, d)
		case c == ']' || c == '}':
			tokens++
			d--
		case c == ',' || c == ':':
			tokens++
		}
	}
	return tokens, depth
}

func jsonDecodeCost(_ sl.Value, args sl.Tuple, _ []sl.Tuple, _ int64) int64 {
	if len(args) < 1 {
		return 0
	}
	s, ok := str(args[0])
	if !ok {
		return 0
	}
	tokens, _ := jsonShape(s)
	// Every value follows a structural character, or is the whole text; a
	// dict entry takes two (a colon and a comma or brace).
	return addSat(int64(len(s))+newBytes, mulSat(tokens+1, pieceBytes))
}
