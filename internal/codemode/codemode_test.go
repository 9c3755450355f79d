package codemode

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// echo is a tool that answers with its arguments.
var echo = Func{Name: "echo", Params: []string{"text", "n"}, Call: func(_ context.Context, args map[string]any) (string, error) {
	if args["text"] == "fail" {
		return "", errors.New("echo refused")
	}
	return fmt.Sprint(args["text"], "/", args["n"]), nil
}}

func TestScriptPrintsCallsToolsAndReturnsItsLastExpression(t *testing.T) {
	src := `
print(echo("a", 1))
print(echo(text="b", n=[1, 2]))
print(echo({"text": "c"}))
r = call("echo", "fail")
print(r["ok"], r["output"])
{"files": [x for x in ["x", "y"]], "n": len(json.decode('[1,2,3]'))}
`
	res, err := Run(context.Background(), src, []Func{echo}, Limits{})
	if err != nil {
		t.Fatalf("run: %v (output %q)", err, res.Output)
	}
	want := "a/1\nb/[1 2]\nc/<nil>\nFalse echo refused\n" + `{"files":["x","y"],"n":3}`
	if res.Output != want {
		t.Errorf("output %q\nwant   %q", res.Output, want)
	}
}

func TestAFailingToolCallStopsTheScriptWithItsMessage(t *testing.T) {
	res, err := Run(context.Background(), "print('before')\necho('fail')\nprint('after')", []Func{echo}, Limits{})
	if err == nil || !strings.Contains(err.Error(), "echo refused") {
		t.Fatalf("error %v, want the tool's failure", err)
	}
	if res.Output != "before\n" {
		t.Errorf("output %q, want what was printed before the failure", res.Output)
	}
}

func limitOf(err error) string {
	var le *LimitError
	if errors.As(err, &le) {
		return le.Limit
	}
	return ""
}

func TestEachLimitStopsTheScriptWithItsOwnError(t *testing.T) {
	for _, c := range []struct {
		name, src string
		lim       Limits
	}{
		{"steps", "while True:\n  pass", Limits{MaxSteps: 100_000}},
		{"output", "while True:\n  print('spam')", Limits{MaxOutput: 1000}},
		{"memory", "l = []\nwhile True:\n  l.append('x' * 100000)", Limits{MaxMemory: 32 << 20}},
		{"time", "while True:\n  pass", Limits{Timeout: time.Millisecond}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Run(context.Background(), c.src, nil, c.lim)
			if limitOf(err) != c.name {
				t.Fatalf("error %v, want the %s limit", err, c.name)
			}
			if !strings.Contains(err.Error(), c.name+" limit reached") {
				t.Errorf("error %q does not name the limit", err)
			}
			if c.name == "output" && len(res.Output) != 1000 {
				t.Errorf("output of %d bytes, want exactly the 1000 allowed", len(res.Output))
			}
		})
	}
}

func TestCancelStopsARunningScript(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	started := Func{Name: "started", Call: func(context.Context, map[string]any) (string, error) { cancel(); return "", nil }}
	_, err := Run(ctx, "started()\nwhile True:\n  pass", []Func{started}, Limits{MaxSteps: 1 << 62})
	if !errors.Is(err, ErrCancelled) {
		t.Fatalf("error %v, want ErrCancelled", err)
	}
}

func TestSyntaxErrorsNameTheLine(t *testing.T) {
	_, err := Run(context.Background(), "x = 1\ny = (", nil, Limits{})
	if err == nil || !strings.Contains(err.Error(), "script.star:2") {
		t.Fatalf("error %v, want one naming script.star:2", err)
	}
}

func TestATimeLimitStopsAToolCallInProgressAndSaysSo(t *testing.T) {
	var seen *LimitError
	slow := Func{Name: "slow", Call: func(ctx context.Context, _ map[string]any) (string, error) {
		<-ctx.Done() // a tool that runs until stopped, like a long shell command
		seen, _ = Cause(ctx)
		return "", ctx.Err()
	}}
	_, err := Run(context.Background(), "slow()", []Func{slow}, Limits{Timeout: 10 * time.Millisecond})
	if limitOf(err) != "time" {
		t.Fatalf("error %v, want the time limit", err)
	}
	if seen == nil || seen.Limit != "time" {
		t.Errorf("the tool saw cause %v, want the time limit", seen)
	}
}
