package acp

import (
	"bytes"
	"encoding/json"
	"testing"
)

// viaEncodingJSON hides compactJSON: encodeFrame gives it to encoding/json,
// which calls the same MarshalJSON and compacts its output — the oracle.
type viaEncodingJSON struct{ json.Marshaler }

// Results whose MarshalJSON is json.Marshal's are framed byte for byte as
// encoding/json frames them, without the second pass.
func TestCompactResultsFrameLikeEncodingJSON(t *testing.T) {
	env := &wireMessage{JSONRPC: "2.0", ID: json.RawMessage(`7`), hasID: true}
	for _, text := range chunkTexts() {
		for _, r := range []compactMarshaler{
			InitializeResponse{},
			InitializeResponse{ProtocolVersion: ProtocolVersion,
				AgentCapabilities: AgentCapabilities{LoadSession: true, Meta: Meta{"a<": text}},
				AgentInfo:         &Implementation{Name: "corvid", Title: text, Version: "<&>"},
				AuthMethods:       []AuthMethod{{ID: "env:X", Name: text, Description: "Set X & \"go\" <here>"}}},
			ListSessionsResponse{},
			ListSessionsResponse{Sessions: []SessionInfo{{SessionID: "s", Cwd: "/tmp/" + text, Title: text}}},
			SetSessionConfigOptionResponse{},
		} {
			fast, err := encodeFrame(env, r)
			if err != nil {
				t.Fatal(err)
			}
			slow, err := encodeFrame(env, viaEncodingJSON{r})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(fast, slow) {
				t.Fatalf("%T with %q:\nframe %s\njson  %s", r, text, fast, slow)
			}
		}
	}
}
