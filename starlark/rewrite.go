package starlark

import (
	"strconv"

	"go.starlark.net/syntax"
)

// instrument rewrites a parsed module so that every operation that can build
// a value of unbounded size runs through a guard (guards.go) that charges the
// allocation budget first: calls, attribute reads, arithmetic, slices,
// comprehension elements, dict stores and augmented assignments. Meaning and
// evaluation order are kept: an operand that the rewrite reads twice is read
// once into a temporary unless it is a name or a literal.
func instrument(f *syntax.File) {
	r := &rewriter{}
	f.Stmts = r.stmts(f.Stmts)
}

type rewriter struct{ temps int }

// temp returns a fresh temporary's name; '$' keeps it out of authored reach.
func (r *rewriter) temp() string {
	r.temps++
	return "$t" + strconv.Itoa(r.temps)
}

func (r *rewriter) stmts(list []syntax.Stmt) []syntax.Stmt {
	if list == nil {
		return nil
	}
	out := make([]syntax.Stmt, 0, len(list))
	for _, s := range list {
		out = append(out, r.stmt(s)...)
	}
	return out
}

func (r *rewriter) stmt(s syntax.Stmt) []syntax.Stmt {
	switch s := s.(type) {
	case *syntax.AssignStmt:
		return r.assign(s)
	case *syntax.DefStmt:
		r.params(s.Params)
		s.Body = r.stmts(s.Body)
	case *syntax.ExprStmt:
		s.X = r.expr(s.X)
	case *syntax.IfStmt:
		s.Cond = r.expr(s.Cond)
		s.True = r.stmts(s.True)
		s.False = r.stmts(s.False)
	case *syntax.ForStmt:
		s.Vars = r.target(s.Vars)
		s.X = r.expr(s.X)
		s.Body = r.stmts(s.Body)
	case *syntax.WhileStmt:
		s.Cond = r.expr(s.Cond)
		s.Body = r.stmts(s.Body)
	case *syntax.ReturnStmt:
		s.Result = r.expr(s.Result)
	}
	return []syntax.Stmt{s}
}

// params rewrites the default values of a def's or lambda's parameters.
func (r *rewriter) params(params []syntax.Expr) {
	for _, p := range params {
		if b, ok := p.(*syntax.BinaryExpr); ok && b.Op == syntax.EQ {
			b.Y = r.expr(b.Y)
		}
	}
}

func (r *rewriter) assign(s *syntax.AssignStmt) []syntax.Stmt {
	lhs := unparen(s.LHS)
	if s.Op == syntax.EQ {
		ix, ok := lhs.(*syntax.IndexExpr)
		if !ok {
			s.LHS = r.target(s.LHS)
			s.RHS = r.expr(s.RHS)
			return []syntax.Stmt{s}
		}
		// d[k] = v: v, d and k are evaluated in that order, as before.
		var pre []syntax.Stmt
		rhs := r.expr(s.RHS)
		x, y := r.expr(ix.X), r.expr(ix.Y)
		if !simple(x) || !simple(y) {
			pre = append(pre, r.bind(&rhs, s.OpPos), r.bind(&x, s.OpPos), r.bind(&y, s.OpPos))
		}
		s.LHS = &syntax.IndexExpr{X: x, Lbrack: ix.Lbrack, Y: y, Rbrack: ix.Rbrack}
		s.RHS = call(guardStore, s.OpPos, clone(x), clone(y), rhs)
		return append(pre, s)
	}

	op, ok := augmentedOps[s.Op]
	if !ok {
		return []syntax.Stmt{s} // the resolver rejects it
	}
	// x op= y: the target is read once for the guard and once by the
	// interpreter; a target with a computed container or key reads those once
	// into temporaries first.
	var pre []syntax.Stmt
	var current syntax.Expr
	switch t := lhs.(type) {
	case *syntax.Ident:
		current = clone(t)
	case *syntax.IndexExpr:
		x, y := r.expr(t.X), r.expr(t.Y)
		if !simple(x) || !simple(y) {
			pre = append(pre, r.bind(&x, s.OpPos), r.bind(&y, s.OpPos))
		}
		s.LHS = &syntax.IndexExpr{X: x, Lbrack: t.Lbrack, Y: y, Rbrack: t.Rbrack}
		current = &syntax.IndexExpr{X: clone(x), Lbrack: t.Lbrack, Y: clone(y), Rbrack: t.Rbrack}
	case *syntax.DotExpr:
		x := r.expr(t.X)
		if !simple(x) {
			pre = append(pre, r.bind(&x, s.OpPos))
		}
		s.LHS = &syntax.DotExpr{X: x, Dot: t.Dot, NamePos: t.NamePos, Name: t.Name}
		current = call(guardAttr, t.Dot, clone(x), stringLit(t.Name.Name, t.NamePos))
	default:
		return []syntax.Stmt{s} // the resolver rejects it
	}
	s.RHS = call(guardInplace, s.OpPos, intLit(int64(op), s.OpPos), current, r.expr(s.RHS))
	return append(pre, s)
}

// bind assigns *e to a fresh temporary and makes *e that temporary.
func (r *rewriter) bind(e *syntax.Expr, pos syntax.Position) syntax.Stmt {
	name := r.temp()
	stmt := &syntax.AssignStmt{OpPos: pos, Op: syntax.EQ, LHS: &syntax.Ident{NamePos: pos, Name: name}, RHS: *e}
	*e = &syntax.Ident{NamePos: pos, Name: name}
	return stmt
}

// target rewrites the reads inside an assignment target, not the target.
func (r *rewriter) target(e syntax.Expr) syntax.Expr {
	switch t := e.(type) {
	case *syntax.ParenExpr:
		t.X = r.target(t.X)
	case *syntax.TupleExpr:
		for i := range t.List {
			t.List[i] = r.target(t.List[i])
		}
	case *syntax.ListExpr:
		for i := range t.List {
			t.List[i] = r.target(t.List[i])
		}
	case *syntax.IndexExpr:
		t.X, t.Y = r.expr(t.X), r.expr(t.Y)
	case *syntax.DotExpr:
		t.X = r.expr(t.X)
	}
	return e
}

func (r *rewriter) expr(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case nil, *syntax.Ident, *syntax.Literal:
		return e
	case *syntax.ParenExpr:
		e.X = r.expr(e.X)
	case *syntax.CallExpr:
		fn := e.Fn
		if dot, ok := fn.(*syntax.DotExpr); ok {
			// x.m(args): the interpreter binds the method; $call sees it.
			dot.X = r.expr(dot.X)
		} else {
			fn = r.expr(fn)
		}
		args := append([]syntax.Expr{fn}, r.args(e.Args)...)
		return &syntax.CallExpr{Fn: guardIdent(guardCall, e.Lparen), Lparen: e.Lparen, Args: args, Rparen: e.Rparen}
	case *syntax.DotExpr:
		return call(guardAttr, e.Dot, r.expr(e.X), stringLit(e.Name.Name, e.NamePos))
	case *syntax.IndexExpr:
		e.X, e.Y = r.expr(e.X), r.expr(e.Y)
	case *syntax.SliceExpr:
		e.X, e.Lo, e.Hi, e.Step = r.expr(e.X), r.expr(e.Lo), r.expr(e.Hi), r.expr(e.Step)
		stepped := int64(0)
		if e.Step != nil {
			stepped = 1
		}
		return call(guardSliced, e.Lbrack, e, intLit(stepped, e.Lbrack))
	case *syntax.BinaryExpr:
		e.X, e.Y = r.expr(e.X), r.expr(e.Y)
		if name, ok := binaryGuards[e.Op]; ok {
			return call(name, e.OpPos, e.X, e.Y)
		}
	case *syntax.UnaryExpr:
		e.X = r.expr(e.X)
		if _, lit := e.X.(*syntax.Literal); !lit {
			switch e.Op {
			case syntax.MINUS:
				return call(guardNeg, e.OpPos, e.X)
			case syntax.TILDE:
				return call(guardInvert, e.OpPos, e.X)
			}
		}
	case *syntax.CondExpr:
		e.Cond, e.True, e.False = r.expr(e.Cond), r.expr(e.True), r.expr(e.False)
	case *syntax.ListExpr:
		r.list(e.List)
	case *syntax.TupleExpr:
		r.list(e.List)
	case *syntax.DictExpr:
		for _, entry := range e.List {
			de := entry.(*syntax.DictEntry)
			de.Key, de.Value = r.expr(de.Key), r.expr(de.Value)
		}
	case *syntax.Comprehension:
		for _, c := range e.Clauses {
			switch c := c.(type) {
			case *syntax.ForClause:
				c.Vars = r.target(c.Vars)
				c.X = r.expr(c.X)
			case *syntax.IfClause:
				c.Cond = r.expr(c.Cond)
			}
		}
		if de, ok := e.Body.(*syntax.DictEntry); ok {
			de.Key = r.expr(de.Key)
			de.Value = call(guardEntry, de.Colon, r.expr(de.Value))
		} else {
			e.Body = call(guardElement, e.Lbrack, r.expr(e.Body))
		}
	case *syntax.LambdaExpr:
		r.params(e.Params)
		e.Body = r.expr(e.Body)
	}
	return e
}

func (r *rewriter) list(list []syntax.Expr) {
	for i := range list {
		list[i] = r.expr(list[i])
	}
}

// args rewrites call arguments: name=value keeps its name, *x and **x
// charge the argument list they build.
func (r *rewriter) args(args []syntax.Expr) []syntax.Expr {
	out := make([]syntax.Expr, len(args))
	for i, a := range args {
		switch a := a.(type) {
		case *syntax.BinaryExpr:
			if a.Op == syntax.EQ {
				a.Y = r.expr(a.Y)
				out[i] = a
				continue
			}
		case *syntax.UnaryExpr:
			switch a.Op {
			case syntax.STAR:
				a.X = call(guardSpread, a.OpPos, r.expr(a.X))
				out[i] = a
				continue
			case syntax.STARSTAR:
				a.X = call(guardSpreadKw, a.OpPos, r.expr(a.X))
				out[i] = a
				continue
			}
		}
		out[i] = r.expr(a)
	}
	return out
}

func unparen(e syntax.Expr) syntax.Expr {
	for {
		p, ok := e.(*syntax.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

// simple reports whether reading e twice is the same as reading it once.
func simple(e syntax.Expr) bool {
	switch e.(type) {
	case *syntax.Ident, *syntax.Literal:
		return true
	}
	return false
}

// clone copies a simple expression: the resolver annotates each node.
func clone(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.Ident:
		return &syntax.Ident{NamePos: e.NamePos, Name: e.Name}
	case *syntax.Literal:
		c := *e
		return &c
	}
	return e
}

func guardIdent(name string, pos syntax.Position) *syntax.Ident {
	return &syntax.Ident{NamePos: pos, Name: name}
}

func call(name string, pos syntax.Position, args ...syntax.Expr) *syntax.CallExpr {
	return &syntax.CallExpr{Fn: guardIdent(name, pos), Lparen: pos, Args: args, Rparen: pos}
}

func stringLit(s string, pos syntax.Position) *syntax.Literal {
	return &syntax.Literal{Token: syntax.STRING, TokenPos: pos, Raw: strconv.Quote(s), Value: s}
}

func intLit(n int64, pos syntax.Position) *syntax.Literal {
	return &syntax.Literal{Token: syntax.INT, TokenPos: pos, Raw: strconv.FormatInt(n, 10), Value: n}
}
