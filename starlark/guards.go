package starlark

import (
	"fmt"
	"strings"
	"unicode"

	sl "go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Guard names. The rewrite (rewrite.go) routes every allocating operation of
// authored code through one of these predeclared built-ins, which charges the
// allocation budget before the operation runs. A name starting with '$' cannot
// be written in Starlark source, so authored code can neither call a guard
// nor shadow one.
const (
	guardCall     = "$call"     // f(args): $call(f, args)
	guardAttr     = "$attr"     // x.name read: $attr(x, "name")
	guardInplace  = "$inplace"  // x op= y: x op= $inplace("op", x, y)
	guardStore    = "$store"    // d[k] = v: d[k] = $store(d, k, v)
	guardElement  = "$element"  // [e for ...]: [$element(e) for ...]
	guardEntry    = "$entry"    // {k: v for ...}: {k: $entry(v) for ...}
	guardSliced   = "$sliced"   // x[a:b:c]: $sliced(x[a:b:c], has_step)
	guardSpread   = "$spread"   // f(*x): f(*$spread(x))
	guardSpreadKw = "$spreadkw" // f(**x): f(**$spreadkw(x))
	guardNeg      = "$neg"      // -x
	guardInvert   = "$invert"   // ~x
)

// binaryGuards names the guard of each binary operator that builds a value.
var binaryGuards = map[syntax.Token]string{
	syntax.PLUS: "$add", syntax.MINUS: "$sub", syntax.STAR: "$mul", syntax.SLASH: "$div",
	syntax.SLASHSLASH: "$floordiv", syntax.PERCENT: "$mod", syntax.PIPE: "$or",
	syntax.AMP: "$and", syntax.CIRCUMFLEX: "$xor", syntax.LTLT: "$lsh", syntax.GTGT: "$rsh",
}

// augmentedOps maps an augmented assignment to its binary operator.
var augmentedOps = map[syntax.Token]syntax.Token{
	syntax.PLUS_EQ: syntax.PLUS, syntax.MINUS_EQ: syntax.MINUS, syntax.STAR_EQ: syntax.STAR,
	syntax.SLASH_EQ: syntax.SLASH, syntax.SLASHSLASH_EQ: syntax.SLASHSLASH, syntax.PERCENT_EQ: syntax.PERCENT,
	syntax.PIPE_EQ: syntax.PIPE, syntax.AMP_EQ: syntax.AMP, syntax.CIRCUMFLEX_EQ: syntax.CIRCUMFLEX,
	syntax.LTLT_EQ: syntax.LTLT, syntax.GTGT_EQ: syntax.GTGT,
}

type builtinFunc = func(*sl.Thread, *sl.Builtin, sl.Tuple, []sl.Tuple) (sl.Value, error)

// guards are the predeclared guard built-ins, shared by every module.
var guards = func() sl.StringDict {
	d := sl.StringDict{
		guardCall:     sl.NewBuiltin(guardCall, callGuard),
		guardAttr:     sl.NewBuiltin(guardAttr, attrGuard),
		guardInplace:  sl.NewBuiltin(guardInplace, inplaceGuard),
		guardStore:    sl.NewBuiltin(guardStore, storeGuard),
		guardElement:  sl.NewBuiltin(guardElement, passGuard(elemBytes+valueBytes)),
		guardEntry:    sl.NewBuiltin(guardEntry, passGuard(entryBytes+valueBytes)),
		guardSliced:   sl.NewBuiltin(guardSliced, slicedGuard),
		guardSpread:   sl.NewBuiltin(guardSpread, spreadGuard(valueBytes)),
		guardSpreadKw: sl.NewBuiltin(guardSpreadKw, spreadGuard(newBytes+2*valueBytes)),
		guardNeg:      sl.NewBuiltin(guardNeg, unaryGuard(syntax.MINUS)),
		guardInvert:   sl.NewBuiltin(guardInvert, unaryGuard(syntax.TILDE)),
	}
	for op, name := range binaryGuards {
		d[name] = sl.NewBuiltin(name, binaryGuard(op))
	}
	d.Freeze()
	return d
}()

// chargeFor charges an estimate computed against what the budget has left.
func chargeFor(th *sl.Thread, estimate func(limit int64) int64) error {
	return charge(th, estimate(remaining(th)))
}

// callGuard runs f(args) after charging what f will allocate: a built-in of
// the language by its cost, a Host built-in by what it copies of its
// arguments and the value it returns; an authored function costs nothing by
// itself (its own operations are guarded).
func callGuard(th *sl.Thread, _ *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	f, args := args[0], args[1:]
	switch fn := f.(type) {
	case *sl.Function:
		return sl.Call(th, f, args, kwargs)
	case *sl.Builtin:
		var c cost
		var recv sl.Value
		overhead := callBytes(len(args) + 1 + 2*len(kwargs))
		if recv = fn.Receiver(); recv != nil {
			c, _ = methodCost(recv, fn.Name())
			overhead += boundBytes
		} else {
			c = functionCosts[fn]
			kwargs = guardKey(kwargs)
		}
		if c == nil {
			break // a Host built-in
		}
		err := chargeFor(th, func(limit int64) int64 { return addSat(overhead, c(recv, args, kwargs, limit)) })
		if err != nil {
			return nil, err
		}
		v, err := sl.Call(th, f, args, kwargs)
		if err == nil && fn == universeGetattr && len(args) >= 2 {
			err = chargeProperty(th, args[0], args[1], v)
		}
		return v, err
	case sl.Callable:
	default:
		return sl.Call(th, f, args, kwargs) // fails: not callable
	}
	// The Host keeps or serialises what it is given and builds what it returns.
	err := chargeFor(th, func(limit int64) int64 {
		n := callBytes(len(args) + 1 + 2*len(kwargs))
		for _, a := range args {
			n = addSat(n, renderSize(a, limit))
		}
		for _, kv := range kwargs {
			n = addSat(n, renderSize(kv[1], limit))
		}
		return n
	})
	if err != nil {
		return nil, err
	}
	v, err := sl.Call(th, f, args, kwargs)
	if err != nil {
		return nil, err
	}
	if err := chargeFor(th, func(limit int64) int64 { return dataSize(v, limit) }); err != nil {
		return nil, err
	}
	return v, nil
}

// guardKey routes the key= callback of sorted, min and max through callGuard
// when it is a built-in: they call it from Go, past the rewrite, once per
// element (sorted(l, key = str) renders every element). An authored function
// needs no wrapper: its own operations are guarded.
func guardKey(kwargs []sl.Tuple) []sl.Tuple {
	for i, kv := range kwargs {
		if k, _ := kv[0].(sl.String); k != "key" {
			continue
		}
		key := kv[1]
		if _, ok := key.(*sl.Function); ok || key == sl.None {
			return kwargs
		}
		if _, ok := key.(sl.Callable); !ok {
			return kwargs // the built-in rejects it
		}
		guarded := sl.NewBuiltin(key.String(), func(th *sl.Thread, _ *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
			return callGuard(th, nil, append(sl.Tuple{key}, args...), kw)
		})
		out := append([]sl.Tuple(nil), kwargs...)
		out[i] = sl.Tuple{kv[0], guarded}
		return out
	}
	return kwargs
}

// chargeProperty charges the value a Property of an Object computed.
func chargeProperty(th *sl.Thread, x, name, v sl.Value) error {
	o, ok := x.(*Object)
	if !ok {
		return nil
	}
	n, ok := name.(sl.String)
	if _, prop := o.props[string(n)]; !ok || !prop {
		return nil
	}
	return chargeFor(th, func(limit int64) int64 { return dataSize(v, limit) })
}

// attrGuard reads x.name as the interpreter does, charging a computed
// Property (a fresh copy of Host state on every read).
func attrGuard(th *sl.Thread, _ *sl.Builtin, args sl.Tuple, _ []sl.Tuple) (sl.Value, error) {
	x, name := args[0], args[1]
	v, err := getAttr(x, string(name.(sl.String)))
	if err != nil {
		return nil, err
	}
	if err := chargeProperty(th, x, name, v); err != nil {
		return nil, err
	}
	return v, nil
}

// getAttr is the interpreter's attribute read, messages and spelling hint
// included.
func getAttr(x sl.Value, name string) (sl.Value, error) {
	ha, ok := x.(sl.HasAttrs)
	if !ok {
		return nil, fmt.Errorf("%s has no .%s field or method", x.Type(), name)
	}
	v, err := ha.Attr(name)
	var msg string
	switch nsa, isNSA := err.(sl.NoSuchAttrError); {
	case err == nil && v != nil:
		return v, nil
	case err == nil:
		msg = fmt.Sprintf("%s has no .%s field or method", x.Type(), name)
	case isNSA:
		msg = string(nsa)
	default:
		return nil, err
	}
	if n := nearest(name, ha.AttrNames()); n != "" {
		msg = fmt.Sprintf("%s (did you mean .%s?)", msg, n)
	}
	return nil, fmt.Errorf("%s", msg)
}

// nearest is the candidate closest to x by edit distance, ignoring case and
// underscores, within half of x's length; "" if none is.
func nearest(x string, candidates []string) string {
	fold := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '_' {
				return -1
			}
			return unicode.ToLower(r)
		}, s)
	}
	x = fold(x)
	best, bestD := "", (len(x)+1)/2
	for _, c := range candidates {
		if d := editDistance(x, fold(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	row := make([]int, len(b)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(a); i++ {
		prev := row[0]
		row[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev
			if a[i-1] != b[j-1] {
				sub++
			}
			prev, row[j] = row[j], min(sub, row[j-1]+1, row[j]+1)
		}
	}
	return row[len(b)]
}

func binaryGuard(op syntax.Token) builtinFunc {
	return func(th *sl.Thread, _ *sl.Builtin, args sl.Tuple, _ []sl.Tuple) (sl.Value, error) {
		x, y := args[0], args[1]
		if err := chargeFor(th, func(limit int64) int64 { return binaryCost(op, x, y, limit) }); err != nil {
			return nil, err
		}
		return sl.Binary(op, x, y)
	}
}

func unaryGuard(op syntax.Token) builtinFunc {
	return func(th *sl.Thread, _ *sl.Builtin, args sl.Tuple, _ []sl.Tuple) (sl.Value, error) {
		if i, ok := args[0].(sl.Int); ok {
			if err := charge(th, intCost(intBits(i)+1)); err != nil {
				return nil, err
			}
		}
		return sl.Unary(op, args[0])
	}
}

// inplaceGuard charges x op= y and returns y for the interpreter's own
// in-place operation: a list += extends in place, a dict |= updates in place,
// anything else builds a new value as x op y does.
func inplaceGuard(th *sl.Thread, _ *sl.Builtin, args sl.Tuple, _ []sl.Tuple) (sl.Value, error) {
	op, x, y := syntax.Token(mustInt(args[0])), args[1], args[2]
	err := chargeFor(th, func(limit int64) int64 {
		if _, ok := x.(*sl.List); ok && op == syntax.PLUS {
			if _, ok := y.(sl.Iterable); ok {
				return mulSat(length(y, limit/elemBytes), elemBytes)
			}
		}
		if _, ok := x.(*sl.Dict); ok && op == syntax.PIPE {
			if _, ok := y.(*sl.Dict); ok {
				return mulSat(int64(sl.Len(y)), entryBytes)
			}
		}
		return binaryCost(op, x, y, limit)
	})
	if err != nil {
		return nil, err
	}
	return y, nil
}

func mustInt(v sl.Value) int {
	i, _ := sl.AsInt32(v)
	return i
}

// storeGuard charges d[k] = v for a new key of a dict and returns v.
func storeGuard(th *sl.Thread, _ *sl.Builtin, args sl.Tuple, _ []sl.Tuple) (sl.Value, error) {
	d, k, v := args[0], args[1], args[2]
	switch d := d.(type) {
	case *sl.Dict:
		if _, found, err := d.Get(k); err != nil || found {
			return v, nil // an unhashable key fails the store itself
		}
	case sl.HasSetKey:
	default:
		return v, nil // a list slot is replaced, not added
	}
	if err := charge(th, entryBytes+callBytes(3)); err != nil {
		return nil, err
	}
	return v, nil
}

// passGuard charges per for the value it passes through (a comprehension's
// element or entry).
func passGuard(per int64) builtinFunc {
	return func(th *sl.Thread, _ *sl.Builtin, args sl.Tuple, _ []sl.Tuple) (sl.Value, error) {
		if err := charge(th, per); err != nil {
			return nil, err
		}
		return args[0], nil
	}
}

// slicedGuard charges a slice already taken: a slice never outgrows its
// operand, so charging after the fact still bounds what loops keep. A string
// sliced without a step shares its operand's bytes.
func slicedGuard(th *sl.Thread, _ *sl.Builtin, args sl.Tuple, _ []sl.Tuple) (sl.Value, error) {
	v, stepped := args[0], mustInt(args[1]) != 0
	var n int64
	switch x := v.(type) {
	case sl.String:
		if stepped {
			n = int64(len(x))
		}
	case sl.Bytes:
		if stepped {
			n = int64(len(x))
		}
	default:
		if l := sl.Len(v); l > 0 {
			n = int64(l) * valueBytes
		}
	}
	if err := charge(th, n+newBytes); err != nil {
		return nil, err
	}
	return v, nil
}

// spreadGuard charges the argument list f(*x) or f(**x) builds from x.
func spreadGuard(per int64) builtinFunc {
	return func(th *sl.Thread, _ *sl.Builtin, args sl.Tuple, _ []sl.Tuple) (sl.Value, error) {
		x := args[0]
		if err := chargeFor(th, func(limit int64) int64 { return mulSat(length(x, limit/per), per) }); err != nil {
			return nil, err
		}
		return x, nil
	}
}

// binaryCost estimates x op y.
func binaryCost(op syntax.Token, x, y sl.Value, limit int64) int64 {
	xi, xInt := x.(sl.Int)
	yi, yInt := y.(sl.Int)
	if xInt && yInt {
		bx, by := intBits(xi), intBits(yi)
		switch op {
		case syntax.STAR:
			return intCost(bx + by)
		case syntax.LTLT:
			shift, _ := yi.Int64()
			return intCost(bx + max(0, min(shift, 1<<20)))
		case syntax.SLASHSLASH, syntax.PERCENT, syntax.GTGT:
			return intCost(bx)
		}
		return intCost(max(bx, by) + 1)
	}
	switch op {
	case syntax.PLUS:
		return concatCost(x, y)
	case syntax.STAR:
		if yInt {
			return repeatCost(x, yi)
		}
		if xInt {
			return repeatCost(y, xi)
		}
	case syntax.PERCENT:
		if s, ok := x.(sl.String); ok {
			return percentCost(string(s), y, limit)
		}
	case syntax.PIPE, syntax.AMP, syntax.CIRCUMFLEX, syntax.MINUS:
		_, xd := x.(*sl.Dict)
		_, xs := x.(*sl.Set)
		if xd || xs {
			return addSat(mulSat(int64(sl.Len(x))+max(0, int64(sl.Len(y))), entryBytes), newBytes)
		}
	}
	return 0
}

func concatCost(x, y sl.Value) int64 {
	switch x := x.(type) {
	case sl.String:
		if y, ok := y.(sl.String); ok {
			return int64(len(x)) + int64(len(y)) + newBytes
		}
	case sl.Bytes:
		if y, ok := y.(sl.Bytes); ok {
			return int64(len(x)) + int64(len(y)) + newBytes
		}
	case *sl.List, sl.Tuple:
		if n := sl.Len(y); n >= 0 {
			return (int64(sl.Len(x))+int64(n))*valueBytes + newBytes
		}
	}
	return 0
}

// repeatCost estimates seq * n; a count beyond int64 saturates.
func repeatCost(seq sl.Value, n sl.Int) int64 {
	count, ok := n.Int64()
	if !ok {
		if n.Sign() < 0 {
			return 0
		}
		count = 1<<63 - 1
	}
	if count <= 0 {
		return 0
	}
	var per int64
	switch x := seq.(type) {
	case sl.String:
		per = int64(len(x))
	case sl.Bytes:
		per = int64(len(x))
	case *sl.List, sl.Tuple:
		per = int64(sl.Len(x)) * valueBytes
	default:
		return 0
	}
	return addSat(mulSat(per, count), newBytes)
}
