package fastrelay

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/acpserver"
)

// daemonReads is how the daemon reads line: the message, then
// initialize's params (acp.InitializeRequest, validated), then the key of
// its published answer. ok is false where it would not answer initialize
// with a result.
func daemonReads(line []byte) (id json.RawMessage, key string, keyed, ok bool) {
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.JSONRPC != "2.0" || msg.Method != "initialize" || len(msg.ID) == 0 {
		return nil, "", false, false
	}
	var req acp.InitializeRequest
	if json.Unmarshal(msg.Params, &req) != nil || req.Validate() != nil {
		return nil, "", false, false
	}
	key, keyed = acpserver.InitializeKey(&req)
	return msg.ID, key, keyed, true
}

var initLines = []string{
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
	`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true,"_meta":{"terminal_output":true,"terminal-auth":true}},"clientInfo":{"name":"zed","title":"Zed","version":"0.200.0"}}}`,
	`{"jsonrpc":"2.0","id":"init-1","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"auth":{"terminal":true}}}}`,
	` { "params" : { "_meta" : { "corvid.dev/dialect" : "codebuddy" } , "protocolVersion" : 1 } , "method" : "initialize" , "id" : 12 , "jsonrpc" : "2.0" } `,
	`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":1,"_meta":{"corvid.dev/dialect":"acp"},"clientCapabilities":{"_meta":{"corvid.dev/sessionsChanged":true},"auth":{"terminal":false}}}}`,
	`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":null,"clientInfo":null,"_meta":null}}`,
	`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":1,"_meta":{"corvid.dev/dialect":"zed"}}}`,
	`{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":1,"extra":[1,{"a":"\u00e9\n"},true,null,-1.5e3]}}`,
}

// Lines the relay must leave to the daemon.
var notAnswered = []string{
	`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`,
	`{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1}}`,
	`{"jsonrpc":"2.0","id":null,"method":"initialize","params":{"protocolVersion":1}}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"initialize","params":{"protocolVersion":1}}`,
	`{"jsonrpc":"2.0","id":"a\"b","method":"initialize","params":{"protocolVersion":1}}`,
	`{"jsonrpc":"2.0","id":1,"method":"initialize"}`,
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"ClientCapabilities":{"auth":{"terminal":true}}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"auth":{"terminal":true},"auth":{"terminal":false}}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"\u0061uth":{"terminal":true}}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"auth":{"terminal":"yes"}}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"_meta":{"corvid.dev/dialect":5}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":5}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilitieſ":{"auth":{"terminal":true}}}}`,
	`{"jsonrpc":"2.0","id":1,"Method":"initialize","params":{"protocolVersion":1}}`,
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}} x`,
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}`,
	`[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}]`,
	`{"jsonrpc":"2.0","id":1,"id":2,"method":"initialize","params":{"protocolVersion":1}}`,
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1},"result":{}}`,
}

func TestRelayKeyIsTheDaemonsKey(t *testing.T) {
	for _, line := range initLines {
		id, key, ok := initRequest([]byte(line))
		did, dkey, keyed, dok := daemonReads([]byte(line))
		if !ok || !dok {
			t.Errorf("%s: relay %v, daemon %v; want both to answer", line, ok, dok)
			continue
		}
		if string(id) != string(did) {
			t.Errorf("%s: id %s, daemon %s", line, id, did)
		}
		if keyed && key != dkey {
			t.Errorf("%s: key %q, daemon %q", line, key, dkey)
		}
		if !keyed && strings.Contains(line, `"zed"`) != true {
			t.Errorf("%s: the daemon has no key", line)
		}
	}
	for _, line := range notAnswered {
		if _, key, ok := initRequest([]byte(line)); ok {
			t.Errorf("%s: answered with key %q", line, key)
		}
	}
}

// FuzzInitRequest: whatever the relay answers, the daemon reads as an
// initialize with the same id and, when it publishes one, the same key.
func FuzzInitRequest(f *testing.F) {
	for _, l := range append(append([]string{}, initLines...), notAnswered...) {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, '\n') >= 0 {
			return // one line at a time
		}
		id, key, ok := initRequest(line)
		if !ok {
			return
		}
		did, dkey, keyed, dok := daemonReads(line)
		if !dok {
			t.Fatalf("relay answers %q; the daemon does not", line)
		}
		if string(id) != string(did) {
			t.Fatalf("%q: id %s, daemon %s", line, id, did)
		}
		if keyed && key != dkey {
			t.Fatalf("%q: key %q, daemon %q", line, key, dkey)
		}
	})
}

// TestAnswersFileIsTheDaemons: the relay's names for the file are the
// daemon's.
func TestAnswersFileIsTheDaemons(t *testing.T) {
	if answersSuffix != acpserver.InitAnswersSuffix || answersHeader != acpserver.InitAnswersHeader {
		t.Fatalf("relay %q %q, daemon %q %q", answersSuffix, answersHeader, acpserver.InitAnswersSuffix, acpserver.InitAnswersHeader)
	}
}
