package tui

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// keySeen is the model, telling when it handled a key.
type keySeen struct {
	noInit
	seen chan struct{}
}

func (k keySeen) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := k.model.Update(msg)
	if _, ok := msg.(tea.KeyPressMsg); ok {
		close(k.seen)
	}
	return k, cmd
}

// A long print does not hold the event loop while the terminal is slow to
// take it: a key typed behind it is handled before the terminal read a
// byte. (The print was written in the event loop, which waited in write(2)
// until the terminal had taken it all.)
func TestPrintDoesNotHoldTheEventLoop(t *testing.T) {
	r, w, err := os.Pipe() // the terminal, not read for now
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m := testModel()
	m.width, m.height = 100, 30
	out := m.output(w)
	k := keySeen{noInit{m}, make(chan struct{})}
	p := tea.NewProgram(k, tea.WithInput(nil), tea.WithOutput(out), tea.WithWindowSize(100, 30),
		tea.WithFilter(printFilter(m)))
	done := make(chan struct{})
	go func() { _, _ = p.Run(); close(done) }()
	// 640 lines of 100 bytes: one print message (about spillBytes), more
	// than the pipe holds (64 KiB) after the first frames. (A print of
	// several messages waits in filterPrint for the one before it.)
	text := strings.Repeat(strings.Repeat("0123456789", 10)+"\n", 640)
	b, _ := json.Marshal(chunk("agent_message_chunk", text))
	p.Send(updateMsg{sessionID: "s1", raw: b})
	time.Sleep(200 * time.Millisecond)               // the print is on its way
	go p.Send(tea.KeyPressMsg{Code: 'q', Text: "q"}) // a loop held in a write would not take it
	select {
	case <-k.seen:
	case <-time.After(5 * time.Second):
		t.Error("a key behind a long print was not handled while the terminal did not read")
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	p.Quit()
	<-done
	if err := m.out.Close(); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
}

// slowWriter takes writes one at a time, each when let.
type slowWriter struct {
	mu  sync.Mutex
	got bytes.Buffer
	let chan struct{}
}

func (s *slowWriter) Write(p []byte) (int, error) {
	<-s.let
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got.Write(p)
}

// outPipe keeps the order of the writes, returns before they are written,
// waits while it holds pipeMax bytes, writes everything before Close
// returns, and writes at once when direct.
func TestOutPipe(t *testing.T) {
	s := &slowWriter{let: make(chan struct{})}
	p := newOutPipe(s)
	var want bytes.Buffer
	for i := 0; i < 3; i++ { // none is written yet: each returns at once
		b := []byte(strings.Repeat(string(rune('a'+i)), 1000))
		want.Write(b)
		if n, err := p.Write(b); n != len(b) || err != nil {
			t.Fatalf("write %d: %d, %v", i, n, err)
		}
	}
	full := make(chan struct{})
	go func() {
		big := bytes.Repeat([]byte("x"), pipeMax)
		_, _ = p.Write(big) // the queue holds pipeMax or more after it
		_, _ = p.Write([]byte("y"))
		close(full)
	}()
	select {
	case <-full:
		t.Fatal("a write to a full queue did not wait")
	case <-time.After(100 * time.Millisecond):
	}
	want.Write(bytes.Repeat([]byte("x"), pipeMax))
	want.WriteString("y")
	go func() {
		for range 100 {
			s.let <- struct{}{}
		}
	}()
	<-full
	p.setDirect(true)
	_, _ = p.Write([]byte("z")) // written when it returns
	want.WriteString("z")
	s.mu.Lock()
	got := s.got.String()
	s.mu.Unlock()
	if got != want.String() {
		t.Errorf("written %d bytes, want %d, in order", len(got), want.Len())
	}
	p.setDirect(false)
	_, _ = p.Write([]byte("!"))
	want.WriteString("!")
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if s.got.String() != want.String() {
		t.Error("Close returned before the queue was written")
	}
}
