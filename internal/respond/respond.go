// Package respond lets a person answer corvid's permission questions out of
// band, for ACP hosts that send no clientCapabilities and never answer an
// agent→client request (old Gas City). The ACP server writes the question
// as message text, keeps the turn open and waits in Broker.Ask; the user
// runs `corvid respond ID allow|always|deny`, which finds the waiting
// process through its control socket (List, Reply) and answers it.
//
// Start with Listen and Broker.Ask on the server side, List and Reply on
// the client side. Each corvid process listens on one unix socket,
// corvid-<pid>.sock, in a directory of mode 0700 (normally
// config.RuntimeDir); the socket is mode 0600 and every connection's peer
// uid is checked, so only the user who runs corvid can answer it.
//
// Invariants: a question is settled exactly once; anything but an explicit
// answer through the socket — a timeout, a cancelled context, shutdown —
// settles it as Deny. A timeout is never consent.
package respond

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Question is a permission question waiting for an answer.
type Question struct {
	// ID is short and human-typable ("q7k2"); Ask assigns one when empty.
	ID        string    `json:"id"`
	SessionID string    `json:"sessionId,omitempty"`
	Title     string    `json:"title"`
	Detail    string    `json:"detail,omitempty"`
	Cwd       string    `json:"cwd,omitempty"`
	Asked     time.Time `json:"asked"`
}

// Answer is a person's decision on a Question.
type Answer string

const (
	Allow  Answer = "allow"  // this once
	Always Answer = "always" // for the rest of the session
	Deny   Answer = "deny"
)

var (
	// ErrTimeout is wrapped by Ask's error when nobody answered in time.
	ErrTimeout = errors.New("no answer in time")
	// ErrClosed is returned by Ask when the broker shut down.
	ErrClosed = errors.New("permission broker closed")
	// ErrUnknownQuestion is wrapped by Reply's error when no live corvid
	// process holds the id.
	ErrUnknownQuestion = errors.New("no pending question")
	// ErrBadAnswer is wrapped when an answer is not allow, always or deny.
	ErrBadAnswer = errors.New("answer must be allow, always or deny")
)

// ParseAnswer accepts allow, always or deny, in any case.
func ParseAnswer(s string) (Answer, error) {
	switch a := Answer(strings.ToLower(strings.TrimSpace(s))); a {
	case Allow, Always, Deny:
		return a, nil
	}
	return "", fmt.Errorf("%w, not %q", ErrBadAnswer, s)
}

// Describe says in a few words what the answer does ("allowed once").
func (a Answer) Describe() string {
	switch a {
	case Allow:
		return "allowed once"
	case Always:
		return "allowed for the rest of the session"
	case Deny:
		return "denied"
	}
	return string(a)
}

// The wire protocol: one JSON request and one JSON response per
// connection, each a single line.

const (
	opList  = "list"
	opReply = "reply"
)

type request struct {
	Op     string `json:"op"`
	ID     string `json:"id,omitempty"`
	Answer Answer `json:"answer,omitempty"`
}

type response struct {
	Questions []Question `json:"questions,omitempty"`
	// Settled maps recently settled ids to what became of them ("answered
	// allow", "denied: no answer in time after 1h0m0s"), so a late reply
	// gets a better message than "unknown".
	Settled map[string]string `json:"settled,omitempty"`
	Error   string            `json:"error,omitempty"`
}
