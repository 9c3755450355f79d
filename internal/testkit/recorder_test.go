package testkit

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// recorder is a testing.TB whose Errorf is recorded instead of failing the test, so tests
// can assert that the kit fails a test when it should (and only then).
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func newRecorder(t *testing.T) *recorder { return &recorder{TB: t} }

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Error(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprint(args...))
}

// Failed reports only the recorded errors: the kit's failure dump is exercised too.
func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.errs) > 0
}

func (r *recorder) errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

// expectOne fails t unless exactly one recorded error contains every fragment, and
// returns that error's text.
func (r *recorder) expectOne(t *testing.T, fragments ...string) string {
	t.Helper()
	errs := r.errors()
	var hits []string
	for _, e := range errs {
		all := true
		for _, f := range fragments {
			if !strings.Contains(e, f) {
				all = false
			}
		}
		if all {
			hits = append(hits, e)
		}
	}
	if len(hits) != 1 {
		t.Fatalf("want exactly one kit error containing %q, got %d; all errors:\n%s", fragments, len(hits), strings.Join(errs, "\n---\n"))
	}
	return hits[0]
}

func (r *recorder) expectNone(t *testing.T) {
	t.Helper()
	if errs := r.errors(); len(errs) > 0 {
		t.Fatalf("want no kit errors, got %d:\n%s", len(errs), strings.Join(errs, "\n---\n"))
	}
}
