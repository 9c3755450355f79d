// Command badagent is a deliberately broken ACP agent: the conformance tests run
// the kit against it and require the checks for each fault to fail.
//
// Its faults: a log line on stdout, protocolVersion echoed, no agentInfo, the
// same session id every time, notifications answered, unknown methods and
// unknown auth methods "succeed", bad JSON ignored, cancel ignored, an update
// (schema-invalid) after the prompt response, an fs/read_text_file request to
// a client that advertised nothing, and no exit when stdin closes.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

var mu sync.Mutex

func write(v any) {
	b, _ := json.Marshal(v)
	mu.Lock()
	defer mu.Unlock()
	os.Stdout.Write(append(b, '\n'))
}

func main() {
	fmt.Println("badagent: starting up") // fault: a log line on stdout
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue // fault: no -32700
		}
		if m.Method == "" {
			continue // a response to our own request
		}
		if m.ID == nil {
			// fault: notifications are answered
			write(map[string]any{"jsonrpc": "2.0", "id": nil, "result": map[string]any{}})
			continue
		}
		handle(m.ID, m.Method, m.Params)
	}
	for { // fault: never exits on EOF
		time.Sleep(time.Hour)
	}
}

func reply(id json.RawMessage, result any) {
	write(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func handle(id json.RawMessage, method string, params json.RawMessage) {
	switch method {
	case "initialize":
		var p struct {
			ProtocolVersion any `json:"protocolVersion"`
		}
		_ = json.Unmarshal(params, &p)
		// faults: the client's version echoed; no agentInfo
		reply(id, map[string]any{"protocolVersion": p.ProtocolVersion, "agentCapabilities": map[string]any{}})
	case "session/new":
		reply(id, map[string]any{"sessionId": "sess_same"}) // fault: never distinct
	case "session/prompt":
		go prompt(id)
	default:
		reply(id, map[string]any{}) // fault: unknown methods succeed
	}
}

func prompt(id json.RawMessage) {
	// fault: the client advertised no fs capability
	write(map[string]any{"jsonrpc": "2.0", "id": "fs-1", "method": "fs/read_text_file",
		"params": map[string]any{"sessionId": "sess_same", "path": "/etc/hostname"}})
	for i := 0; i < 10; i++ { // fault: session/cancel is ignored
		write(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": "sess_same",
			"update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "chunk "}}}})
		time.Sleep(30 * time.Millisecond)
	}
	reply(id, map[string]any{"stopReason": "end_turn"})
	// faults: an update after the response, and without a content type
	write(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": "sess_same",
		"update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"text": "late"}}}})
}
