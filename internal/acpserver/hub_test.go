package acpserver

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/agent"
)

// The hub's question routing (questions.go) with connections that are
// only their state: run these under the race detector,
// go test -race ./internal/acpserver/ -run Hub.

// hubConn is one connection of hub whose client can answer requests.
func hubConn(t *testing.T, hub *Hub, name string) *Server {
	t.Helper()
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	s := &Server{opts: Options{Hub: hub}, sessions: map[string]*session{}, clientCaps: &acp.ClientCapabilities{},
		clientInfo: &acp.Implementation{Name: name, Version: "1"}}
	s.conn = acp.NewConn(pr, io.Discard, s, acp.Options{})
	hub.join(s)
	t.Cleanup(func() { hub.leave(s) })
	return s
}

// holdersOf makes n connections of hub hold one session; the first
// session object is the one whose agent session asks.
func holdersOf(t *testing.T, hub *Hub, n int) []*session {
	t.Helper()
	var all []*session
	for i := range n {
		s := hubConn(t, hub, "client-"+string(rune('a'+i)))
		ss := &session{srv: s, id: "sess_hub"}
		if i == 0 {
			ss.holders = newHolders(ss)
		} else {
			ss.holders = all[0].holders
			if !ss.holders.join(ss) {
				t.Fatal("join refused")
			}
		}
		s.sessions["sess_hub"] = ss
		all = append(all, ss)
	}
	return all
}

func TestHubQuestionFirstValidAnswerWinsAndTheOthersAreWithdrawn(t *testing.T) {
	hub := NewHub()
	all := holdersOf(t, hub, 3)
	var withdrawn atomic.Int32
	v, ok := all[0].route(t.Context(), routed{toolCallID: "call_1", title: "Write", can: anyClient,
		ask: func(ctx context.Context, t *session) (any, bool) {
			switch t {
			case all[0]: // an error, or an option never offered
				return nil, false
			case all[1]:
				<-ctx.Done()
				withdrawn.Add(1)
				return "late", true
			}
			time.Sleep(10 * time.Millisecond)
			return "c's answer", true
		}})
	if !ok || v != "c's answer" {
		t.Fatalf("route = %v, %v; want c's answer", v, ok)
	}
	deadline := time.Now().Add(5 * time.Second)
	for withdrawn.Load() != 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if withdrawn.Load() != 1 {
		t.Fatal("the question still open on b was not withdrawn")
	}
	if w := all[0].holders.waiting(); len(w) != 0 {
		t.Fatalf("still waiting after the answer: %v", w)
	}
}

// Connections attach (and others leave) while the question is open, and
// session/list is read meanwhile: each attacher is asked, the one that
// answers wins, and nothing races.
func TestHubQuestionReachesConnectionsThatAttachWhileItIsOpen(t *testing.T) {
	hub := NewHub()
	all := holdersOf(t, hub, 2)
	const late = 12
	var asked sync.Map
	answerer := make(chan *session, 1)
	done := make(chan struct{})
	var got any
	var ok bool
	go func() {
		defer close(done)
		got, ok = all[0].route(t.Context(), routed{toolCallID: "call_2", title: "Pick", can: anyClient,
			ask: func(ctx context.Context, t *session) (any, bool) {
				asked.Store(t, true)
				select {
				case a := <-answerer:
					if a == t {
						return t.srv.clientInfo.Name, true
					}
					answerer <- a
				case <-ctx.Done():
				}
				<-ctx.Done()
				return nil, false
			}})
	}()
	for len(all[0].holders.waiting()) == 0 {
		time.Sleep(time.Millisecond)
	}
	var wg sync.WaitGroup
	joined := make([]*session, late)
	for i := range late {
		wg.Go(func() {
			s := hubConn(t, hub, "late-"+string(rune('a'+i)))
			ss := &session{srv: s, id: "sess_hub", holders: all[0].holders}
			if !ss.holders.join(ss) {
				t.Error("join refused")
				return
			}
			s.mu.Lock()
			s.sessions["sess_hub"] = ss
			s.mu.Unlock()
			joined[i] = ss
			ss.holders.offer(ss)
			_ = hub.listMeta(agent.SessionInfo{ID: "sess_hub"}, false)
		})
	}
	wg.Go(func() { all[1].holders.leave(all[1]) })
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for _, ss := range joined {
		for {
			if _, yes := asked.Load(ss); yes {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s attached while the question was open and was not asked", ss.srv.clientInfo.Name)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if w := all[0].holders.waiting(); len(w) != 1 || w[0].ToolCallID != "call_2" {
		t.Fatalf("corvid.dev/waiting = %v", w)
	}
	answerer <- joined[late-1]
	<-done
	if !ok || got != joined[late-1].srv.clientInfo.Name {
		t.Fatalf("route = %v, %v; want %s's answer", got, ok, joined[late-1].srv.clientInfo.Name)
	}
}

func TestHubQuestionNobodyAnswersEndsAtTheInteractionTimeout(t *testing.T) {
	hub := NewHub()
	all := holdersOf(t, hub, 2)
	all[0].srv.opts.InteractionTimeout = 50 * time.Millisecond
	start := time.Now()
	_, ok := all[0].route(t.Context(), routed{toolCallID: "call_3", can: anyClient,
		ask: func(ctx context.Context, _ *session) (any, bool) { <-ctx.Done(); return nil, false }})
	if ok {
		t.Fatal("a question nobody answered counted as answered")
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("the timeout did not end the question")
	}
}
