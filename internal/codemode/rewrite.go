package codemode

import (
	"fmt"
	"strconv"

	"go.starlark.net/syntax"
)

// Starlark has no hook before an operator or a method allocates, so the
// script's syntax tree is rewritten before it is compiled: every operator
// that may allocate in proportion to its operands (+ * % |, and their
// augmented forms) and every attribute read (x.replace, x.join, ...)
// becomes a call of a guard (guard.go) that checks the estimated
// allocation against the memory budget, then does what the syntax did.
// The guards' names start with "$", which no script can write, so a
// script cannot shadow or call them by name.

// guardedOps are the binary operators whose result may be larger than
// their operands: string, bytes, list and tuple + and *, % formatting,
// dict and set |, and int * (whose bits add up).
var guardedOps = map[syntax.Token]bool{syntax.PLUS: true, syntax.STAR: true, syntax.PERCENT: true, syntax.PIPE: true}

// augmented maps each guarded augmented assignment to its operator.
var augmented = map[syntax.Token]syntax.Token{syntax.PLUS_EQ: syntax.PLUS, syntax.STAR_EQ: syntax.STAR, syntax.PERCENT_EQ: syntax.PERCENT, syntax.PIPE_EQ: syntax.PIPE}

const attrGuard = "$attr"

func binaryGuard(op syntax.Token) string  { return "$" + op.String() }
func inplaceGuard(op syntax.Token) string { return "$" + op.String() + "=" }

// guardSyntax rewrites f in place.
func guardSyntax(f *syntax.File) {
	r := &rewriter{}
	f.Stmts = r.stmts(f.Stmts)
}

type rewriter struct{ temps int }

func (r *rewriter) stmts(in []syntax.Stmt) []syntax.Stmt {
	out := make([]syntax.Stmt, 0, len(in))
	for _, s := range in {
		out = append(out, r.stmt(s)...)
	}
	return out
}

func (r *rewriter) stmt(s syntax.Stmt) []syntax.Stmt {
	switch s := s.(type) {
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
		if s.Result != nil {
			s.Result = r.expr(s.Result)
		}
	case *syntax.DefStmt:
		r.exprs(s.Params)
		s.Body = r.stmts(s.Body)
	case *syntax.AssignStmt:
		return r.assign(s)
	}
	return []syntax.Stmt{s}
}

// assign rewrites x op= y as x = $op=(x, y), evaluating any container and
// index in x once, into temporaries, as the augmented form does.
func (r *rewriter) assign(s *syntax.AssignStmt) []syntax.Stmt {
	op, ok := augmented[s.Op]
	if !ok {
		s.LHS = r.target(s.LHS)
		s.RHS = r.expr(s.RHS)
		return []syntax.Stmt{s}
	}
	pos := s.OpPos
	set := func(lhs, rhs syntax.Expr) *syntax.AssignStmt {
		return &syntax.AssignStmt{OpPos: pos, Op: syntax.EQ, LHS: lhs, RHS: rhs}
	}
	switch lhs := s.LHS.(type) {
	case *syntax.Ident:
		return []syntax.Stmt{set(lhs, call(inplaceGuard(op), pos, ident(lhs.Name, lhs.NamePos), r.expr(s.RHS)))}
	case *syntax.IndexExpr:
		x, i := r.temp(), r.temp()
		index := func() *syntax.IndexExpr {
			return &syntax.IndexExpr{X: ident(x, pos), Lbrack: lhs.Lbrack, Y: ident(i, pos), Rbrack: lhs.Rbrack}
		}
		return []syntax.Stmt{
			set(ident(x, pos), r.expr(lhs.X)),
			set(ident(i, pos), r.expr(lhs.Y)),
			set(index(), call(inplaceGuard(op), pos, index(), r.expr(s.RHS))),
		}
	case *syntax.DotExpr:
		x := r.temp()
		field := func() *syntax.DotExpr {
			return &syntax.DotExpr{X: ident(x, pos), Dot: lhs.Dot, NamePos: lhs.NamePos, Name: ident(lhs.Name.Name, lhs.NamePos)}
		}
		return []syntax.Stmt{
			set(ident(x, pos), r.expr(lhs.X)),
			set(field(), call(inplaceGuard(op), pos, r.expr(field()), r.expr(s.RHS))),
		}
	}
	// Anything else is not assignable; the resolver says so.
	return []syntax.Stmt{s}
}

func (r *rewriter) temp() string {
	r.temps++
	return fmt.Sprintf("$t%d", r.temps)
}

// target rewrites the expressions inside an assignment target, not the
// target itself (x.f = v stays a field assignment).
func (r *rewriter) target(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.ParenExpr:
		e.X = r.target(e.X)
	case *syntax.TupleExpr:
		for i, x := range e.List {
			e.List[i] = r.target(x)
		}
	case *syntax.ListExpr:
		for i, x := range e.List {
			e.List[i] = r.target(x)
		}
	case *syntax.IndexExpr:
		e.X = r.expr(e.X)
		e.Y = r.expr(e.Y)
	case *syntax.DotExpr:
		e.X = r.expr(e.X)
	}
	return e
}

func (r *rewriter) exprs(list []syntax.Expr) {
	for i, x := range list {
		list[i] = r.expr(x)
	}
}

func (r *rewriter) expr(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.BinaryExpr:
		// Keyword arguments and parameter defaults are x=y too: only y
		// is an expression there, and = is not guarded.
		if e.Op != syntax.EQ {
			e.X = r.expr(e.X)
		}
		e.Y = r.expr(e.Y)
		if guardedOps[e.Op] {
			return call(binaryGuard(e.Op), e.OpPos, e.X, e.Y)
		}
	case *syntax.DotExpr:
		return call(attrGuard, e.Dot, r.expr(e.X), &syntax.Literal{Token: syntax.STRING, TokenPos: e.NamePos, Raw: strconv.Quote(e.Name.Name), Value: e.Name.Name})
	case *syntax.CallExpr:
		e.Fn = r.expr(e.Fn)
		r.exprs(e.Args)
	case *syntax.ParenExpr:
		e.X = r.expr(e.X)
	case *syntax.ListExpr:
		r.exprs(e.List)
	case *syntax.TupleExpr:
		r.exprs(e.List)
	case *syntax.DictExpr:
		r.exprs(e.List)
	case *syntax.DictEntry:
		e.Key = r.expr(e.Key)
		e.Value = r.expr(e.Value)
	case *syntax.CondExpr:
		e.Cond = r.expr(e.Cond)
		e.True = r.expr(e.True)
		e.False = r.expr(e.False)
	case *syntax.IndexExpr:
		e.X = r.expr(e.X)
		e.Y = r.expr(e.Y)
	case *syntax.SliceExpr:
		e.X = r.expr(e.X)
		for _, p := range []*syntax.Expr{&e.Lo, &e.Hi, &e.Step} {
			if *p != nil {
				*p = r.expr(*p)
			}
		}
	case *syntax.UnaryExpr:
		if e.X != nil {
			e.X = r.expr(e.X)
		}
	case *syntax.Comprehension:
		e.Body = r.expr(e.Body)
		for _, c := range e.Clauses {
			switch c := c.(type) {
			case *syntax.ForClause:
				c.Vars = r.target(c.Vars)
				c.X = r.expr(c.X)
			case *syntax.IfClause:
				c.Cond = r.expr(c.Cond)
			}
		}
	case *syntax.LambdaExpr:
		r.exprs(e.Params)
		e.Body = r.expr(e.Body)
	}
	return e
}

func ident(name string, pos syntax.Position) *syntax.Ident {
	return &syntax.Ident{NamePos: pos, Name: name}
}

func call(fn string, pos syntax.Position, args ...syntax.Expr) *syntax.CallExpr {
	return &syntax.CallExpr{Fn: ident(fn, pos), Lparen: pos, Args: args, Rparen: pos}
}
