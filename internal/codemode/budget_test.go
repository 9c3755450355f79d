package codemode

import (
	"context"
	"runtime"
	"strings"
	"testing"
)

// Each script allocates, in one operator or builtin call, far more than its
// budget. The call must be refused before it allocates: the script ends
// with the memory limit, naming the operation and its line, and the process
// allocated little more than the setup did (TotalAlloc counts every byte
// allocated, collected or not).
func TestOneCallCannotAllocatePastTheMemoryBudget(t *testing.T) {
	const limit = 64 << 20
	big := "x = 'a' * 30000000\n"
	for _, c := range []struct{ name, src, op string }{
		{"replace", big + "x.replace('a', 'aaaaaaaaaa')", "string.replace"},
		{"join", big + "''.join([x, x, x])", "string.join"},
		{"string repeat", "'a' * 100000000", "the * operator"},
		{"list repeat", "[1] * 50000000", "the * operator"},
		{"concatenation", big + "y = x + x + x", "the + operator"},
		{"augmented", big + "x += x\nx += x", "the + operator"},
		{"list augmented repeat", "x = [0]\nx *= 10000000", "the * operator"},
		{"percent", big + "'%s%s%s' % (x, x, x)", "the % operator"},
		{"percent dict", big + "'%(a)s%(a)s%(a)s' % {'a': x}", "the % operator"},
		{"format", big + "'{0}{0}{0}'.format(x)", "string.format"},
		{"str of aliases", "l = ['a' * 1000000] * 100\nstr(l)", "str"},
		{"print of aliases", "print(['a' * 1000000] * 100)", "print"},
		{"json.encode", "json.encode(['a' * 1000000] * 100)", "json.encode"},
		{"json.encode_indent", "json.encode_indent([[[[[[[[[[[[[[[[0]]]]]]]]]]]]]]]] * 400000, indent = ' ' * 100)", "json.encode_indent"},
		{"json.indent", "json.indent('[' * 20000 + ']' * 20000)", "json.indent"},
		{"list(range)", "list(range(10000000))", "list"},
		{"sorted", "sorted(range(10000000))", "sorted"},
		{"enumerate", "enumerate(range(10000000))", "enumerate"},
		{"extend", "l = []\nl.extend(range(10000000))", "list.extend"},
		{"split", "x = 'a ' * 20000000\nx.split()", "string.split"},
		{"getattr", big + "getattr(x, 'replace')('a', 'aaaa')", "string.replace"},
		{"bound method", big + "r = x.replace\nr('a', 'aaaa')", "string.replace"},
		{"in a function", big + "def f(s):\n  return s.replace('a', 'aaaa')\nf(x)", "string.replace"},
	} {
		t.Run(c.name, func(t *testing.T) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Run(context.Background(), c.src, nil, Limits{MaxMemory: limit})
			runtime.ReadMemStats(&after)
			if limitOf(err) != "memory" {
				t.Fatalf("error %v, want the memory limit", err)
			}
			if !strings.Contains(err.Error(), c.op+" would allocate") || !strings.Contains(err.Error(), "script.star:") {
				t.Errorf("error %q does not say that %s would allocate too much, and where", err, c.op)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 2*limit {
				t.Errorf("the script allocated %d MiB with a %d MiB budget: the call ran before it was checked", grew>>20, limit>>20)
			}
		})
	}
}

// The guards change what an operator or method costs, not what it does.
func TestGuardedOperationsKeepTheirMeaning(t *testing.T) {
	src := `
l = [1]
m = l
l += [2]
d = {"a": 1}
e = d
d |= {"b": 2}
s = "x"
s += "y"
s *= 2
c = {"k": [1]}
c["k"] += [2]
n = [0, 0]
i = 0
n[i + 1] += 5
def f():
  t = [1]
  t[0] *= 3
  return t
print(m, e, s, c, n, f())
print("%s-%d" % ("a", 3), "{}:{x}".format(1, x=2), ",".join(["a", "b"]), "a b".split(), 3 * "ab", [1] * 2, 7 % 3, 5 | 2)
print(getattr("abc", "upper")(), "abc".upper(), json.encode({"a": [1, 2]}), json.decode("[1]"))
print(sorted([3, 1, 2]), list(range(3)), dict(a=1), set([1]) | set([2]), (lambda x: x * 2)(4))
[x + 1 for x in [1, 2]] + [k + v for k, v in {"a": "b"}.items()]
`
	res, err := Run(context.Background(), src, nil, Limits{})
	if err != nil {
		t.Fatalf("run: %v (output %q)", err, res.Output)
	}
	want := `[1, 2] {"a": 1, "b": 2} xyxy {"k": [1, 2]} [0, 5] [3]
a-3 1:2 a,b ["a", "b"] ababab [1, 1] 1 7
ABC ABC {"a":[1,2]} [1]
[1, 2, 3] [0, 1, 2] {"a": 1} set([1, 2]) 8
[2,3,"ab"]`
	if res.Output != want {
		t.Errorf("output\n%s\nwant\n%s", res.Output, want)
	}
}

// A failing operator or attribute reports the script's line, as the
// interpreter does, not a guard.
func TestGuardedOperationsFailAsTheInterpreterDoes(t *testing.T) {
	for src, want := range map[string]string{
		"x = 1\ny = x + 'a'": "script.star:2:7: in <toplevel>\nError: unknown binary op: int + string",
		"'abc'.nosuch()":     "Error: string has no .nosuch field or method",
		"t = (1,)\nt += [2]": "unknown binary op: tuple + list",
		"'%d' % 'a'":         "%d format requires integer",
		"'a'.replace(1, 2)":  "Error in replace: replace: for parameter 1: got int, want string",
	} {
		_, err := Run(context.Background(), src, nil, Limits{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", src, err, want)
		}
	}
}
