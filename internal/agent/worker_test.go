package agent

import (
	"errors"
	"testing"
)

// The turn runner's rules for drain turns (worker.go): one starts only
// when the latest turn ended and was answered (or was a drain turn), never
// while a turn runs or after Close; a prompt registered during a drain turn
// waits for it instead of being refused.
func TestDrainTurnRegistration(t *testing.T) {
	var r turnRunner
	s := &Session{}
	if _, ok := r.startDrain(s, ""); !ok {
		t.Fatal("a fresh session is idle: startDrain refused")
	}
	d := r.turn
	if _, ok := r.startDrain(s, ""); ok {
		t.Fatal("a second drain turn registered while the first runs")
	}
	p, err := r.start(s, nil, TurnOptions{})
	if err != nil {
		t.Fatalf("a prompt during a drain turn: %v, want it to wait", err)
	}
	if p.prev != d {
		t.Fatal("the prompt does not wait for the drain turn")
	}
	if d.cancelled {
		t.Fatal("the prompt cancelled the drain turn")
	}
	if _, err := r.start(s, nil, TurnOptions{}); !errors.Is(err, ErrBusy) {
		t.Fatalf("a second prompt while one waits: %v, want ErrBusy", err)
	}
	close(d.done)
	close(p.done)
	if _, ok := r.startDrain(s, ""); ok {
		t.Fatal("a drain turn started before the prompt's answer was written")
	}
	p.answered = true
	if _, ok := r.startDrain(s, ""); !ok {
		t.Fatal("no drain turn after the prompt was answered")
	}
	close(r.turn.done)
	r.shut()
	if _, ok := r.startDrain(s, ""); ok {
		t.Fatal("a drain turn started after Close")
	}
}
