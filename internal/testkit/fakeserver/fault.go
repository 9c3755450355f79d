package fakeserver

import (
	"strconv"
	"time"
)

// FaultKind says how a response goes wrong. The provider packages alias it
// and document what each kind looks like in their wire format.
type FaultKind int

const (
	NoFault FaultKind = iota
	// FaultHTTP answers with an HTTP error instead of a stream.
	FaultHTTP
	// FaultStreamError writes AfterEvents events, then an error event, and
	// ends the stream.
	FaultStreamError
	// FaultCut writes AfterEvents events, then drops the connection without
	// ending the HTTP response (the client reads an unexpected EOF). With
	// AfterEvents 0 no response byte is sent.
	FaultCut
	// FaultStall writes AfterEvents events, then nothing for Stall (or until
	// the client goes away or the server closes), then carries on. With
	// AfterEvents 0 the response headers wait too.
	FaultStall
	// FaultMalformed writes AfterEvents events, then a data line that is not
	// JSON, then carries on.
	FaultMalformed
)

// Fault is what Server and Stream need of a scripted fault; the provider
// packages keep the error's status, codes and text, which only their wire
// format knows how to write.
type Fault struct {
	Kind        FaultKind
	RetryAfter  string // FaultHTTP: the retry-after header, "" for none
	AfterEvents int    // the counted events written before the fault fires
	Stall       time.Duration
}

// RetryAfterSeconds is a retry-after header value for d, rounded up to
// whole seconds; "" (no header) when d is not positive.
func RetryAfterSeconds(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}
