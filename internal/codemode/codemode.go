// Package codemode runs the scripts of codeMode "all" (docs/codemode.md): a
// Starlark program in which each of a session's tools is a function. It
// knows nothing of tools or sessions; the agent passes the functions in and
// decides what each call does (the permission gate, the editor's view).
//
// Start with Run. Everything is set up per call, so nothing is initialised
// before a script runs; the interpreter's package init is a few kilobytes.
//
// Limits, each a *LimitError naming the limit: wall time (a context
// deadline, which also stops a tool call in progress), Starlark execution
// steps (counted by the interpreter), memory and output size. Memory is
// measured on the Go heap, since Starlark accounts no allocations
// (budget.go): every operator and builtin that may allocate in proportion
// to its operands checks its estimated allocation against what is left
// before it runs (the syntax tree is rewritten to call guards, rewrite.go
// and guard.go), and a watchdog samples the heap every few milliseconds
// for growth in small steps. Other work of the process counts too.
package codemode

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Limits bound one script; a zero field takes its default.
type Limits struct {
	Timeout   time.Duration // wall time, tool calls included (default 5 min)
	MaxSteps  uint64        // Starlark execution steps (default 50 million)
	MaxMemory int64         // heap growth in bytes, approximate (default 512 MiB)
	MaxOutput int           // printed output plus the result, in bytes (default 1 MiB)
}

// Defaults are the limits a zero Limits means.
var Defaults = Limits{Timeout: 5 * time.Minute, MaxSteps: 50_000_000, MaxMemory: 512 << 20, MaxOutput: 1 << 20}

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = Defaults.Timeout
	}
	if l.MaxSteps == 0 {
		l.MaxSteps = Defaults.MaxSteps
	}
	if l.MaxMemory <= 0 {
		l.MaxMemory = Defaults.MaxMemory
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = Defaults.MaxOutput
	}
	return l
}

// LimitError says which limit stopped a script.
type LimitError struct {
	Limit  string // "time", "steps", "memory", "output"
	Value  string // the limit, in words
	Detail string // what reached it, when known
}

func (e *LimitError) Error() string {
	msg := fmt.Sprintf("script stopped: %s limit reached (%s)", e.Limit, e.Value)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Cause reports the limit that ended ctx, a context Run passed to a
// function; ok is false when ctx is live or was cancelled from outside.
func Cause(ctx context.Context) (*LimitError, bool) {
	var le *LimitError
	ok := errors.As(context.Cause(ctx), &le)
	return le, ok
}

// ErrCancelled is returned when the script's context was cancelled.
var ErrCancelled = errors.New("script cancelled")

// Func is a function the script may call. Call gets the arguments as JSON
// values (keyword arguments, or the keys of one positional dict) and
// returns the text the script receives; an error fails the call (and the
// script, unless it used call()).
type Func struct {
	Name   string
	Params []string // positional parameter names, in order
	Call   func(ctx context.Context, args map[string]any) (string, error)
}

// Result is what a script produced: its printed output, then its result
// (the value of its last expression statement, or of a global named result).
type Result struct {
	Output string
	Steps  uint64
}

// resultName is the global the last expression statement is assigned to.
const resultName = "result"

// Run runs src with funcs. The Result holds what was printed even when an
// error stopped the script.
func Run(ctx context.Context, src string, funcs []Func, lim Limits) (Result, error) {
	lim = lim.withDefaults()
	// The context's cause says why it ended (Cause), so a tool call cut
	// short can tell a limit from the user's cancel.
	ctx, cancelCause := context.WithCancelCause(ctx)
	defer cancelCause(nil)
	ctx, cancel := context.WithTimeoutCause(ctx, lim.Timeout, &LimitError{Limit: "time", Value: lim.Timeout.String()})
	defer cancel()

	var stopped atomic.Pointer[error] // why the script was stopped from outside
	thread := &starlark.Thread{Name: "script"}
	thread.SetMaxExecutionSteps(lim.MaxSteps)
	stop := func(err error) {
		if stopped.CompareAndSwap(nil, &err) {
			thread.Cancel(err.Error())
			cancelCause(err) // a tool call in progress stops too
		}
	}
	out := &output{max: lim.MaxOutput, full: func() {
		stop(&LimitError{Limit: "output", Value: fmt.Sprintf("%d bytes", lim.MaxOutput)})
	}}
	thread.Print = func(_ *starlark.Thread, msg string) { out.write(msg + "\n") }

	ended := func() {
		if le, ok := Cause(ctx); ok {
			stop(le)
			return
		}
		stop(ErrCancelled)
	}
	afterStop := context.AfterFunc(ctx, ended)
	defer afterStop()
	memoryLimit := func(detail string) *LimitError {
		return &LimitError{Limit: "memory", Value: fmt.Sprintf("%d MiB of heap growth", lim.MaxMemory>>20), Detail: detail}
	}
	mem := newBudget(lim.MaxMemory, func(detail string) error {
		le := memoryLimit(detail + " at " + thread.CallFrame(1).Pos.String())
		stop(le)
		return le
	})
	watchDone := mem.watch(func() { stop(memoryLimit("")) })
	defer watchDone()

	globals, err := run(ctx, thread, src, funcs, &guard{b: mem})
	res := Result{Steps: thread.ExecutionSteps()}
	if err == nil {
		if v, ok := globals[resultName]; ok && v != starlark.None {
			out.write(display(v))
		}
	}
	res.Output = out.String()
	if ctx.Err() != nil {
		ended() // the AfterFunc may not have run yet
	}
	if p := stopped.Load(); p != nil {
		return res, *p
	}
	if err != nil && thread.ExecutionSteps() >= lim.MaxSteps {
		return res, &LimitError{Limit: "steps", Value: fmt.Sprintf("%d execution steps", lim.MaxSteps)}
	}
	if err != nil {
		var ee *starlark.EvalError
		if errors.As(err, &ee) {
			return res, errors.New(ee.Backtrace())
		}
		return res, err
	}
	return res, nil
}

// fileOptions: Python-like enough that models write it without surprises.
var fileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: true}

func run(ctx context.Context, thread *starlark.Thread, src string, funcs []Func, g *guard) (starlark.StringDict, error) {
	f, err := fileOptions.Parse("script.star", src, 0)
	if err != nil {
		return nil, err
	}
	// The last expression statement is the result, as in a REPL.
	if n := len(f.Stmts); n > 0 {
		if es, ok := f.Stmts[n-1].(*syntax.ExprStmt); ok {
			start, _ := es.Span()
			f.Stmts[n-1] = &syntax.AssignStmt{OpPos: start, Op: syntax.EQ, LHS: &syntax.Ident{NamePos: start, Name: resultName}, RHS: es.X}
		}
	}
	guardSyntax(f)
	predeclared := g.predeclared()
	for name, v := range predeclare(ctx, funcs) {
		predeclared[name] = v
	}
	prog, err := starlark.FileProgram(f, predeclared.Has)
	if err != nil {
		return nil, err
	}
	return prog.Init(thread, predeclared)
}

// predeclare makes the functions, call(name, ...) (which returns
// {"ok": bool, "output": text} instead of failing) and the json module.
func predeclare(ctx context.Context, funcs []Func) starlark.StringDict {
	d := starlark.StringDict{}
	byName := map[string]Func{}
	for _, fn := range funcs {
		byName[fn.Name] = fn
		d[fn.Name] = starlark.NewBuiltin(fn.Name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			text, err := invoke(ctx, fn, args, kwargs)
			if err != nil {
				return nil, err
			}
			return starlark.String(text), nil
		})
	}
	d["call"] = starlark.NewBuiltin("call", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if len(args) == 0 {
			return nil, fmt.Errorf("call: want the tool's name first")
		}
		name, ok := starlark.AsString(args[0])
		fn, found := byName[name]
		if !ok || !found {
			return nil, fmt.Errorf("call: no tool %s", args[0])
		}
		text, err := invoke(ctx, fn, args[1:], kwargs)
		res := starlark.NewDict(2)
		_ = res.SetKey(starlark.String("ok"), starlark.Bool(err == nil))
		if err != nil {
			text = err.Error()
		}
		_ = res.SetKey(starlark.String("output"), starlark.String(text))
		return res, nil
	})
	return d
}

// invoke converts the arguments and calls fn. A cancelled script fails the
// call with the cancellation, whatever the tool said.
func invoke(ctx context.Context, fn Func, args starlark.Tuple, kwargs []starlark.Tuple) (string, error) {
	in := map[string]any{}
	if len(args) == 1 && len(kwargs) == 0 {
		if d, ok := args[0].(*starlark.Dict); ok {
			v, err := toGo(d)
			if err != nil {
				return "", fmt.Errorf("%s: %v", fn.Name, err)
			}
			in = v.(map[string]any)
			args = nil
		}
	}
	if len(args) > len(fn.Params) {
		return "", fmt.Errorf("%s: takes at most %d positional arguments (%s); pass the others by name", fn.Name, len(fn.Params), strings.Join(fn.Params, ", "))
	}
	for i, a := range args {
		v, err := toGo(a)
		if err != nil {
			return "", fmt.Errorf("%s: %s: %v", fn.Name, fn.Params[i], err)
		}
		in[fn.Params[i]] = v
	}
	for _, kv := range kwargs {
		k, _ := starlark.AsString(kv[0])
		v, err := toGo(kv[1])
		if err != nil {
			return "", fmt.Errorf("%s: %s: %v", fn.Name, k, err)
		}
		in[k] = v
	}
	text, err := fn.Call(ctx, in)
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	return text, err
}

// output collects printed text up to max bytes.
type output struct {
	mu   sync.Mutex
	b    strings.Builder
	max  int
	full func()
}

func (o *output) write(s string) {
	o.mu.Lock()
	room := o.max - o.b.Len()
	over := len(s) > room
	if over {
		s = s[:max(room, 0)]
	}
	o.b.WriteString(s)
	o.mu.Unlock()
	if over {
		o.full()
	}
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}
