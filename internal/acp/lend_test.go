package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// With LendParams, every notification's params reach the handler as sent
// while lent lines are reused: those queued behind a slow handler, lines
// over lendMax, the frames of a line split at bare CRs. A request's
// params, which a handler may keep, are never lent.
func TestLentParamsReachTheHandlerIntact(t *testing.T) {
	hold, release := `{"n":"hold"}`, make(chan struct{})
	got := make(chan string, 1000)
	var kept json.RawMessage
	requested := make(chan struct{})
	h := &testHandler{
		notify: func(_ context.Context, _ string, params json.RawMessage) {
			if string(params) == hold {
				<-release // the lines behind it queue up meanwhile
			}
			// A slow handler: the reader reads on meanwhile, into lent
			// buffers, and would overwrite these params were theirs lent
			// again before the handler returned.
			time.Sleep(200 * time.Microsecond)
			got <- string(params)
		},
		request: func(_ context.Context, _ string, params json.RawMessage) (any, error) {
			kept = params
			close(requested)
			return nil, nil
		},
	}
	p := startConn(t, h, Options{LendParams: true})
	var want []string
	note := func(params string) {
		want = append(want, params)
		p.send(`{"jsonrpc":"2.0","method":"note","params":` + params + `}`)
	}
	for i := 0; i < 300; i++ {
		switch i {
		case 100:
			note(hold)
		case 150:
			p.send(`{"jsonrpc":"2.0","id":1,"method":"req","params":{"keep":"me"}}`)
		case 200:
			want = append(want, `{"n":"a"}`, `{"n":"b"}`)
			p.send(`{"jsonrpc":"2.0","method":"note","params":{"n":"a"}}` + "\r" + `{"jsonrpc":"2.0","method":"note","params":{"n":"b"}}`)
		}
		note(fmt.Sprintf(`{"n":%d,"pad":"%s"}`, i, strings.Repeat(string(rune('a'+i%26)), i*i%(2*lendMax))))
		if i == 120 {
			close(release)
		}
	}
	for i, w := range want {
		select {
		case g := <-got:
			if g != w {
				t.Fatalf("notification %d: params %.80s…, want %.80s…", i, g, w)
			}
		case <-time.After(waitLimit):
			t.Fatalf("notification %d never handled", i)
		}
	}
	<-requested
	if string(kept) != `{"keep":"me"}` {
		t.Errorf("a request's params, kept by its handler, became %s", kept)
	}
}
