// Package respond lets a person answer corvid's permission questions out of
// band, for ACP hosts that send no clientCapabilities and never answer an
// agent→client request (old Gas City). The ACP server writes the question
// as message text, keeps the turn open and waits in Broker.Ask; the user
// runs `corvid respond ID allow|always|deny`, which finds the waiting
// process through its control socket (List, Reply) and answers it.
//
// Start with Listen and Broker.Ask on the server side, List and Reply on
// the client side. Each corvid process listens on one unix socket, found
// through its entry in a directory of mode 0700 (Place, from
// config.RuntimePlace): on Linux an abstract socket named in
// corvid-<pid>.addr, so that the shell sandbox can shut sandboxed commands
// out of it, elsewhere the socket file corvid-<pid>.sock (mode 0600).
//
// Only a person answers: every connection's peer uid is checked, and on
// Linux a peer that descends from this corvid process (a command it ran, an
// MCP server, anything they left behind, detached or not: internal/reaper
// keeps those below corvid) is refused (refuseDescendant). See
// docs/security.md, "Who can answer a question".
//
// Invariants: a question is settled exactly once; anything but an explicit
// answer through the socket — a timeout, a cancelled context, shutdown —
// settles it as Deny. A timeout is never consent.
package respond

import (
	"errors"
	"fmt"
	"net"
	"strconv"
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
	// Choices, when set, make this a choice question (ask_user and
	// exit_plan on such hosts): it is answered with one of them, by label or
	// by number from 1, and the Answer is the chosen label. As for any
	// question, nothing but an answer through the socket (a timeout, a
	// cancel) settles it as Deny: no choice.
	Choices []string `json:"choices,omitempty"`
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
	// ErrAnsweredElsewhere is wrapped by the cause that ends Ask's ctx
	// when the question was answered another way (an ACP client of the
	// daemon, corvid serve).
	ErrAnsweredElsewhere = errors.New("answered elsewhere")
	// ErrClosed is returned by Ask when the broker shut down.
	ErrClosed = errors.New("permission broker closed")
	// ErrUnknownQuestion is wrapped by Reply's error when no live corvid
	// process holds the id.
	ErrUnknownQuestion = errors.New("no pending question")
	// ErrBadAnswer is wrapped when an answer is not allow, always or deny.
	ErrBadAnswer = errors.New("answer must be allow, always or deny")
	// ErrBadChoice is wrapped when the answer to a choice question is none
	// of its choices.
	ErrBadChoice = errors.New("answer must be one of the question's choices")
)

// ParseReply reads s as an answer to q: for a choice question one of its
// choices (a label, in any case, before a number from 1), else allow,
// always or deny.
func (q Question) ParseReply(s string) (Answer, error) {
	if len(q.Choices) == 0 {
		return ParseAnswer(s)
	}
	t := strings.TrimSpace(s)
	for _, c := range q.Choices {
		if strings.EqualFold(c, t) {
			return Answer(c), nil
		}
	}
	if n, err := strconv.Atoi(t); err == nil && n >= 1 && n <= len(q.Choices) {
		return Answer(q.Choices[n-1]), nil
	}
	return "", fmt.Errorf("%w (%s), by label or number, not %q", ErrBadChoice, q.ChoiceList(), s)
}

// ChoiceList is the choices numbered from 1: "1 Postgres, 2 SQLite".
func (q Question) ChoiceList() string {
	parts := make([]string, len(q.Choices))
	for i, c := range q.Choices {
		parts[i] = fmt.Sprintf("%d %s", i+1, c)
	}
	return strings.Join(parts, ", ")
}

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

// PeerUID is the uid of the process at the other end of a unix socket
// connection, as the kernel recorded it (SO_PEERCRED, LOCAL_PEERCRED); on
// platforms that cannot tell it fails, so callers refuse the peer.
// `corvid serve` checks its sockets' peers with it too.
func PeerUID(conn *net.UnixConn) (int, error) { return peerUID(conn) }

// RefuseDescendant says why the peer of a unix socket connection may not
// answer corvid's questions when it descends from this process (a command
// corvid ran, or anything that command left behind, detached or not), and
// is nil for any other peer. On platforms that cannot tell it is nil:
// there only the uid is checked. `corvid serve` checks its socket's peers
// with it too; internal/serve does the same for loopback TCP peers.
func RefuseDescendant(conn *net.UnixConn) error { return refuseDescendant(conn) }
