package acp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// AfterGone runs its func once the peer's input ends, and at once when
// registered after that.
func TestAfterGoneRunsWhenThePeerLeaves(t *testing.T) {
	p := startConn(t, &testHandler{}, Options{})
	before := make(chan struct{})
	p.conn.AfterGone(func() { close(before) })
	select {
	case <-before:
		t.Fatal("AfterGone ran while the peer was still there")
	case <-time.After(50 * time.Millisecond):
	}
	p.in.Close()
	select {
	case <-before:
	case <-time.After(5 * time.Second):
		t.Fatal("AfterGone did not run once the peer left")
	}
	after := make(chan struct{})
	p.conn.AfterGone(func() { close(after) })
	select {
	case <-after:
	case <-time.After(5 * time.Second):
		t.Fatal("AfterGone registered after the peer left did not run")
	}
}

// Options.ReadBuffer only sizes the input buffer: a line many times its
// size still arrives whole.
func TestSmallReadBufferReadsLongLinesWhole(t *testing.T) {
	got := make(chan int, 1)
	p := startConn(t, &testHandler{notify: func(_ context.Context, _ string, params json.RawMessage) {
		got <- len(params)
	}}, Options{ReadBuffer: 64, QueueFrames: 1})
	text := strings.Repeat("x", 10000)
	p.send(`{"jsonrpc":"2.0","method":"n","params":{"t":"` + text + `"}}`)
	select {
	case n := <-got:
		if want := len(`{"t":"` + text + `"}`); n != want {
			t.Fatalf("params of %d bytes; want %d", n, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the long line never arrived")
	}
}
