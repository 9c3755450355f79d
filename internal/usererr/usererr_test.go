package usererr

import (
	"errors"
	"fmt"
	"testing"
)

type providerErr struct{ msg string }

func (p *providerErr) Error() string     { return "provider: " + p.msg }
func (p *providerErr) UserError() *Error { return New(p.msg, "") }

func TestOfFindsTheOutermostUserError(t *testing.T) {
	inner := errors.New("sqlite: disk I/O error")
	err := fmt.Errorf("open: %w", Wrap(inner, "The session store cannot be read."))
	u, ok := Of(err)
	if !ok || u.Message != "The session store cannot be read." {
		t.Fatalf("Of = %v, %v", u, ok)
	}
	if !errors.Is(err, inner) {
		t.Error("the cause is lost for errors.Is")
	}
	if u, ok := Of(fmt.Errorf("turn: %w", &providerErr{"The key was refused."})); !ok || u.Message != "The key was refused." {
		t.Errorf("a Shower: %v %v", u, ok)
	}
	if _, ok := Of(inner); ok {
		t.Error("an internal error was taken as user-facing")
	}
}
