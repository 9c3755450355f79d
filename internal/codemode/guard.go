package codemode

import (
	"math"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkjson"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// A guard checks an operation's estimated allocation against the budget
// before the operation runs (rewrite.go says which syntax calls them).
type guard struct{ b *budget }

// cost estimates what a call allocates, from its receiver (nil for a
// function) and arguments; room bounds the counting.
type cost func(recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple, room int64) int64

// predeclared returns the guards and the universe's allocating functions
// wrapped with their checks; they shadow the universe's.
func (g *guard) predeclared() starlark.StringDict {
	d := starlark.StringDict{attrGuard: starlark.NewBuiltin("getattr", g.attr)}
	for op := range guardedOps {
		d[binaryGuard(op)] = starlark.NewBuiltin(op.String(), g.binary(op))
		d[inplaceGuard(op)] = starlark.NewBuiltin(op.String()+"=", g.inplace(op))
	}
	for name, c := range functionCosts {
		if orig, ok := starlark.Universe[name].(*starlark.Builtin); ok {
			d[name] = g.wrap(orig, name, c)
		}
	}
	d["getattr"] = starlark.NewBuiltin("getattr", func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		v, err := starlark.Universe["getattr"].(*starlark.Builtin).CallInternal(th, args, kwargs)
		if err != nil || len(args) < 2 {
			return v, err
		}
		name, _ := starlark.AsString(args[1])
		return g.method(args[0], name, v), nil
	})
	json := &starlarkstruct.Module{Name: "json", Members: starlark.StringDict{}}
	for name, v := range starlarkjson.Module.Members {
		if c, ok := jsonCosts[name]; ok {
			v = g.wrap(v.(*starlark.Builtin), "json."+name, c)
		}
		json.Members[name] = v
	}
	d["json"] = json
	return d
}

func (g *guard) room() int64 { return g.b.limit + 1 }

// wrap is orig behind its cost check.
func (g *guard) wrap(orig *starlark.Builtin, what string, c cost) *starlark.Builtin {
	return starlark.NewBuiltin(orig.Name(), func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := g.b.reserve(what, c(orig.Receiver(), args, kwargs, g.room())); err != nil {
			return nil, err
		}
		return orig.CallInternal(th, args, kwargs)
	})
}

// method is v, the attribute name of x, wrapped when it is a method that
// allocates in proportion to its receiver or arguments.
func (g *guard) method(x starlark.Value, name string, v starlark.Value) starlark.Value {
	b, ok := v.(*starlark.Builtin)
	if !ok || b.Receiver() == nil {
		return v
	}
	what := x.Type() + "." + name
	c, ok := methodCosts[what]
	if !ok {
		return v
	}
	return g.wrap(b, what, c).BindReceiver(x)
}

// attr is x.name.
func (g *guard) attr(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	x, name := args[0], string(args[1].(starlark.String))
	o, ok := x.(starlark.HasAttrs)
	if !ok {
		return nil, callerError(th, x.Type()+" has no ."+name+" field or method")
	}
	v, err := o.Attr(name)
	if err != nil {
		return nil, callerError(th, err.Error())
	}
	if v == nil {
		return nil, callerError(th, x.Type()+" has no ."+name+" field or method")
	}
	return g.method(x, name, v), nil
}

func (g *guard) binary(op syntax.Token) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	what := "the " + op.String() + " operator"
	return func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		x, y := args[0], args[1]
		if err := g.b.reserve(what, binarySize(op, x, y, g.room())); err != nil {
			return nil, err
		}
		z, err := starlark.Binary(op, x, y)
		if err != nil {
			return nil, callerError(th, err.Error())
		}
		return z, nil
	}
}

// inplace is x op= y: a list += extends the list and a dict |= updates
// the dict in place, as the interpreter does; the rest is x op y.
func (g *guard) inplace(op syntax.Token) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	binary := g.binary(op)
	return func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		x, y := args[0], args[1]
		var update string
		switch x.(type) {
		case *starlark.List:
			if _, ok := y.(starlark.Iterable); ok && op == syntax.PLUS {
				update = "extend"
			}
		case *starlark.Dict:
			if _, ok := y.(*starlark.Dict); ok && op == syntax.PIPE {
				update = "update"
			}
		}
		if update == "" {
			return binary(th, b, args, kwargs)
		}
		if err := g.b.reserve("the "+op.String()+"= operator", binarySize(op, x, y, g.room())); err != nil {
			return nil, err
		}
		m, err := x.(starlark.HasAttrs).Attr(update)
		if err != nil {
			return nil, callerError(th, err.Error())
		}
		if _, err := m.(*starlark.Builtin).CallInternal(th, starlark.Tuple{y}, nil); err != nil {
			return nil, callerError(th, err.Error())
		}
		return x, nil
	}
}

// callerError is msg as an error of the script's own line, as the
// interpreter reports a failing operator, not of the guard's frame.
func callerError(th *starlark.Thread, msg string) error {
	stack := th.CallStack()
	return &starlark.EvalError{Msg: msg, CallStack: stack[:len(stack)-1]}
}

// binarySize estimates what x op y allocates.
func binarySize(op syntax.Token, x, y starlark.Value, room int64) int64 {
	switch op {
	case syntax.PLUS:
		return sizeOf(x, room) + sizeOf(y, room)
	case syntax.STAR:
		if _, ok := x.(starlark.Int); ok {
			x, y = y, x
		}
		n, ok := y.(starlark.Int)
		if !ok {
			return 0
		}
		if xi, ok := x.(starlark.Int); ok {
			_, small1 := xi.Int64()
			_, small2 := n.Int64()
			if small1 && small2 {
				return 0
			}
			return int64(xi.BigInt().BitLen()+n.BigInt().BitLen()) / 8
		}
		k, ok := n.Int64()
		if !ok {
			k = math.MaxInt64
		}
		return times(sizeOf(x, room), k, room)
	case syntax.PERCENT:
		if s, ok := x.(starlark.String); ok {
			return percentSize(string(s), y, room)
		}
	case syntax.PIPE:
		return sizeOf(x, room) + sizeOf(y, room)
	}
	return 0
}

// sizeOf is what a copy of x's elements costs: its bytes for strings, a
// slot or a hash-table entry per element for collections.
func sizeOf(x starlark.Value, room int64) int64 {
	switch x := x.(type) {
	case starlark.String:
		return int64(len(x))
	case starlark.Bytes:
		return int64(len(x))
	case *starlark.List:
		return int64(x.Len()) * slotBytes
	case starlark.Tuple:
		return int64(len(x)) * slotBytes
	case *starlark.Dict:
		return int64(x.Len()) * entryBytes
	case *starlark.Set:
		return int64(x.Len()) * entryBytes
	case starlark.Iterable:
		return max(lengthOf(x, room/slotBytes), 0) * slotBytes
	}
	return 0
}

// times is a*k, saturating past room.
func times(a, k, room int64) int64 {
	if a <= 0 || k <= 0 {
		return 0
	}
	if a > room/k {
		return room + 1
	}
	return a * k
}

// perElement is the cost of a function that stores each element of its
// first argument.
func perElement(per int64) cost {
	return func(_ starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple, room int64) int64 {
		var n int64
		if len(args) > 0 {
			n = max(lengthOf(args[0], room/per+1), 0)
		}
		return times(n+int64(len(kwargs)), per, room)
	}
}

// text is the cost of a function that prints its arguments.
func text(quoted bool) cost {
	return func(_ starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple, room int64) int64 {
		var n int64
		for _, a := range args {
			if n += textSize(a, quoted, room-n) + 1; n > room {
				break
			}
		}
		for _, kv := range kwargs {
			n += textSize(kv[1], false, room-n) + 1
		}
		return n
	}
}

// functionCosts are the universe's functions that allocate in proportion
// to their arguments. range is lazy; len, min, max, any, all and the
// conversions of one number allocate nothing that grows.
var functionCosts = map[string]cost{
	"list":      perElement(slotBytes),
	"tuple":     perElement(slotBytes),
	"sorted":    perElement(2 * slotBytes), // the list and the sort's keys
	"reversed":  perElement(slotBytes),
	"set":       perElement(entryBytes),
	"dict":      perElement(entryBytes),
	"enumerate": perElement(pairBytes + slotBytes),
	"zip": func(_ starlark.Value, args starlark.Tuple, _ []starlark.Tuple, room int64) int64 {
		n := int64(-1)
		for _, a := range args {
			if k := lengthOf(a, room/slotBytes+1); k >= 0 && (n < 0 || k < n) {
				n = k
			}
		}
		return times(n, slotBytes*int64(len(args)+2), room)
	},
	"str":   text(false),
	"repr":  text(true),
	"print": text(false),
	"fail":  text(false),
}

var jsonCosts = map[string]cost{
	"encode": text(true),
	"decode": func(_ starlark.Value, args starlark.Tuple, _ []starlark.Tuple, room int64) int64 {
		if len(args) == 0 {
			return 0
		}
		s, _ := starlark.AsString(args[0])
		// Each element of a few bytes becomes a Value, a list or a dict.
		return times(int64(len(s)), 32, room)
	},
	"indent": func(_ starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple, room int64) int64 {
		if len(args) == 0 {
			return 0
		}
		s, _ := starlark.AsString(args[0])
		return indentSize(s, indentWidth(kwargs), room)
	},
	"encode_indent": func(_ starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple, room int64) int64 {
		if len(args) == 0 {
			return 0
		}
		// At most one line per byte of the compact form, each indented
		// to the value's depth.
		sz := sizer{room: room}
		sz.value(args[0], true)
		return times(sz.n, 1+indentWidth(kwargs)*int64(sz.deepest+1), room)
	},
}

// indentWidth is the bytes one level of json.indent's prefix and indent
// (keyword-only, "" and a tab by default) add to a line.
func indentWidth(kwargs []starlark.Tuple) int64 {
	width := int64(1)
	for _, kv := range kwargs {
		v, _ := starlark.AsString(kv[1])
		switch k, _ := starlark.AsString(kv[0]); k {
		case "indent":
			width += int64(len(v)) - 1
		case "prefix":
			width += int64(len(v))
		}
	}
	return width
}

// indentSize bounds len(json.indent(s)): each token on a line of its own,
// indented to its depth.
func indentSize(s string, indent, room int64) int64 {
	var depth, most, tokens int64
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '{':
			depth++
			most = max(most, depth)
			tokens++
		case ']', '}':
			depth--
			tokens++
		case ',', ':':
			tokens++
		}
	}
	return int64(len(s)) + times(tokens, 1+most*indent, room)
}

// str is the receiver of a string method.
func str(recv starlark.Value) string {
	s, _ := starlark.AsString(recv)
	return s
}

// methodCosts are the methods that allocate in proportion to their
// receiver or arguments, by "type.name". Methods that return a part of
// their receiver share its bytes; elems() and the like are lazy; append
// and insert add one element (the watchdog sees a list grow).
var methodCosts = map[string]cost{
	"string.replace": func(recv starlark.Value, args starlark.Tuple, _ []starlark.Tuple, _ int64) int64 {
		if len(args) < 2 {
			return 0
		}
		old, _ := starlark.AsString(args[0])
		new, _ := starlark.AsString(args[1])
		count := -1
		if len(args) > 2 {
			if n, err := starlark.AsInt32(args[2]); err == nil {
				count = n
			}
		}
		return replaceSize(str(recv), old, new, count)
	},
	"string.join": func(recv starlark.Value, args starlark.Tuple, _ []starlark.Tuple, room int64) int64 {
		if len(args) == 0 {
			return 0
		}
		return joinSize(str(recv), args[0], room)
	},
	"string.format": func(recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple, room int64) int64 {
		return formatSize(str(recv), args, kwargs, room)
	},
	"string.split":  splitCost,
	"string.rsplit": splitCost,
	"string.splitlines": func(recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple, room int64) int64 {
		return times(int64(strings.Count(str(recv), "\n")+strings.Count(str(recv), "\r")+1), slotBytes+boxBytes, room)
	},
	"string.upper":             lengthCost,
	"string.lower":             lengthCost,
	"string.title":             lengthCost,
	"string.capitalize":        lengthCost,
	"list.extend":              perElement(slotBytes),
	"dict.update":              perElement(entryBytes),
	"dict.items":               receiverCost(pairBytes + slotBytes),
	"dict.keys":                receiverCost(slotBytes),
	"dict.values":              receiverCost(slotBytes),
	"set.union":                setCost,
	"set.update":               setCost,
	"set.intersection":         setCost,
	"set.difference":           setCost,
	"set.symmetric_difference": setCost,
}

func splitCost(recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple, room int64) int64 {
	var sep string
	maxsplit := -1
	if len(args) > 0 {
		sep, _ = starlark.AsString(args[0])
	}
	if len(args) > 1 {
		if n, err := starlark.AsInt32(args[1]); err == nil {
			maxsplit = n
		}
	}
	for _, kv := range kwargs {
		switch k, _ := starlark.AsString(kv[0]); k {
		case "sep":
			sep, _ = starlark.AsString(kv[1])
		case "maxsplit":
			if n, err := starlark.AsInt32(kv[1]); err == nil {
				maxsplit = n
			}
		}
	}
	return times(splitParts(str(recv), sep, maxsplit), slotBytes+boxBytes, room)
}

func lengthCost(recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple, _ int64) int64 {
	return int64(len(str(recv)))
}

func receiverCost(per int64) cost {
	return func(recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple, room int64) int64 {
		return times(int64(starlark.Len(recv)), per, room)
	}
}

func setCost(recv starlark.Value, args starlark.Tuple, _ []starlark.Tuple, room int64) int64 {
	n := int64(starlark.Len(recv))
	for _, a := range args {
		n += max(lengthOf(a, room/entryBytes+1), 0)
	}
	return times(n, entryBytes, room)
}
