package fakeserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Stream writes one response as server-sent events and fires its fault
// when its turn comes: before the event that would be number AfterEvents+1
// (counting from 1), or at a Due the wire format calls after its last event.
// A fault that ends the stream, a write that fails, or a wait cut short by
// Close or by the client unwinds the Wire's Answer; Server recovers.
//
// The response headers go out with the first write, so a stall before the
// first event holds them too; set any header on the ResponseWriter before.
type Stream struct {
	// EventDelay is slept before every counted event and at every Due:
	// a slow model. A wire format that places its delays itself calls
	// Sleep instead.
	EventDelay time.Duration
	// LineEnd ends each SSE line; "" means "\n".
	LineEnd string
	// ErrorEvent is the event a FaultStreamError writes: its name ("" for
	// data only) and payload.
	ErrorEvent func() (name string, payload any)

	w          http.ResponseWriter
	rc         *http.ResponseController
	fault      Fault
	stop       <-chan struct{}
	clientGone <-chan struct{}
	started    bool // headers written
	events     int  // counted events written
}

// stopStream unwinds an Answer whose stream has ended early.
type stopStream struct{}

func (st *Stream) recoverStop() {
	if r := recover(); r != nil {
		if _, ok := r.(stopStream); !ok {
			panic(r)
		}
	}
}

// HoldHeaders serves ahead of the response headers a stall scripted before
// the first event (AfterEvents 0). The stall is still due before the first
// event and is served again there, as the OpenAI and Gemini fakes have
// always done.
func (st *Stream) HoldHeaders() {
	if st.fault.Kind == FaultStall && st.fault.AfterEvents == 0 {
		st.Sleep(st.fault.Stall)
	}
}

// Start sends the headers now, after HoldHeaders, rather than with the
// first event.
func (st *Stream) Start() {
	st.HoldHeaders()
	st.writeHeader()
	st.flush()
}

// Event writes one counted event (name "" for a data-only event), first
// firing the fault due and sleeping EventDelay.
func (st *Stream) Event(name string, payload any) {
	st.Due()
	st.Write(name, st.marshal(name, payload))
	st.events++
}

// Due fires the fault due after the events written so far, once, then
// sleeps EventDelay.
func (st *Stream) Due() {
	if f := st.fault; f.Kind != NoFault && st.events == f.AfterEvents {
		st.fault = Fault{}
		st.fire(f)
	}
	st.Sleep(st.EventDelay)
}

func (st *Stream) fire(f Fault) {
	switch f.Kind {
	case FaultStreamError:
		name, payload := st.ErrorEvent()
		st.Write(name, st.marshal(name, payload))
		panic(stopStream{})
	case FaultCut:
		// Every write was flushed; aborting the handler closes the
		// connection without the final chunk, so the client reads an
		// unexpected EOF.
		panic(http.ErrAbortHandler)
	case FaultStall:
		st.Sleep(f.Stall)
	case FaultMalformed:
		st.Write("", "{this is not json")
	}
}

// Sleep waits d, ending the stream if the server closes or the client goes
// away first.
func (st *Stream) Sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-st.stop:
		panic(stopStream{})
	case <-st.clientGone:
		panic(stopStream{})
	}
}

// Write writes one uncounted event with data as it is (a ping, a terminator
// such as [DONE]) and flushes it, with no fault and no delay before it.
func (st *Stream) Write(name, data string) {
	st.writeHeader()
	end := st.LineEnd
	if end == "" {
		end = "\n"
	}
	var err error
	if name != "" {
		_, err = fmt.Fprintf(st.w, "event: %s%sdata: %s%s%s", name, end, data, end, end)
	} else {
		_, err = fmt.Fprintf(st.w, "data: %s%s%s", data, end, end)
	}
	if err != nil {
		panic(stopStream{})
	}
	st.flush()
}

func (st *Stream) writeHeader() {
	if !st.started {
		st.w.WriteHeader(http.StatusOK)
		st.started = true
	}
}

func (st *Stream) flush() {
	if st.rc.Flush() != nil {
		panic(stopStream{})
	}
}

func (st *Stream) marshal(name string, payload any) string {
	b, err := json.Marshal(payload)
	if err != nil {
		panic(fmt.Sprintf("fakeserver: marshal event %q: %v", name, err))
	}
	return string(b)
}

// Pieces splits s into pieces of n bytes, each stretched to the end of the
// rune it would cut. An empty s is no pieces.
func Pieces(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		end := min(n, len(s))
		for end < len(s) && s[end]&0xC0 == 0x80 { // a UTF-8 continuation byte
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}
