// Command fakeagent is a tiny ACP agent for the testkit's own tests. Its output is steered
// by the test through extension requests, so each test can make it misbehave on purpose:
//
//	initialize, session/new, session/prompt  valid answers (prompt streams one echo chunk)
//	session/list                             a schema-INVALID result (sessions is a string)
//	_fake/say {lines: [string]}              writes each string verbatim as a stdout line
//	_fake/call {method, params}              calls the client, answers {response: <its reply>}
//	_fake/getenv {name}                      answers {value}
//	_fake/exit {code}                        exits at once with code
//	_fake/ignore_eof                         keeps running after stdin closes
//
// Other requests get -32601; notifications are ignored. On stdin EOF it exits 0.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

type msg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

var (
	outMu     sync.Mutex
	pendingMu sync.Mutex
	pending   = map[string]chan json.RawMessage{}
	nextID    int
	ignoreEOF bool
	sessions  int
)

func writeLine(b []byte) {
	outMu.Lock()
	defer outMu.Unlock()
	os.Stdout.Write(append(b, '\n'))
}

func reply(id json.RawMessage, result any) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	writeLine(b)
}

func replyError(id json.RawMessage, code int, message string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
	writeLine(b)
}

func main() {
	fmt.Fprintln(os.Stderr, "fakeagent: started")
	r := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			handle(line)
		}
		if err != nil {
			break
		}
	}
	fmt.Fprintln(os.Stderr, "fakeagent: stdin closed")
	if ignoreEOF {
		time.Sleep(time.Hour)
	}
}

func handle(line []byte) {
	var m msg
	if err := json.Unmarshal(line, &m); err != nil {
		replyError(json.RawMessage("null"), -32700, "Parse error")
		return
	}
	if m.Method == "" { // a response to one of our calls
		pendingMu.Lock()
		ch := pending[string(m.ID)]
		pendingMu.Unlock()
		if ch != nil {
			ch <- json.RawMessage(append([]byte(nil), line...))
		}
		return
	}
	if m.ID == nil {
		return
	}
	switch m.Method {
	case "initialize":
		reply(m.ID, map[string]any{
			"protocolVersion":   1,
			"agentCapabilities": map[string]any{"loadSession": false},
			"agentInfo":         map[string]any{"name": "fakeagent", "version": "0.0.0"},
			"authMethods":       []any{},
		})
	case "session/new":
		sessions++
		reply(m.ID, map[string]any{"sessionId": fmt.Sprintf("fake-%d", sessions)})
	case "session/prompt":
		var p struct {
			SessionID string `json:"sessionId"`
			Prompt    []struct{ Text string }
		}
		json.Unmarshal(m.Params, &p)
		text := ""
		if len(p.Prompt) > 0 {
			text = p.Prompt[0].Text
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{
			"sessionId": p.SessionID,
			"update": map[string]any{"sessionUpdate": "agent_message_chunk", "messageId": "m1",
				"content": map[string]any{"type": "text", "text": "echo: " + text}},
		}})
		writeLine(b)
		reply(m.ID, map[string]any{"stopReason": "end_turn"})
	case "session/list":
		reply(m.ID, map[string]any{"sessions": "not an array"})
	case "_fake/say":
		var p struct{ Lines []string }
		json.Unmarshal(m.Params, &p)
		for _, l := range p.Lines {
			writeLine([]byte(l))
		}
		reply(m.ID, map[string]any{})
	case "_fake/call":
		go call(m)
	case "_fake/getenv":
		var p struct{ Name string }
		json.Unmarshal(m.Params, &p)
		reply(m.ID, map[string]any{"value": os.Getenv(p.Name)})
	case "_fake/exit":
		var p struct{ Code int }
		json.Unmarshal(m.Params, &p)
		os.Exit(p.Code)
	case "_fake/ignore_eof":
		ignoreEOF = true
		reply(m.ID, map[string]any{})
	default:
		replyError(m.ID, -32601, "Method not found")
	}
}

// call forwards a request to the client and answers with the client's response line.
func call(m msg) {
	var p struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	json.Unmarshal(m.Params, &p)
	pendingMu.Lock()
	nextID++
	id, _ := json.Marshal(fmt.Sprintf("fa-%d", nextID))
	ch := make(chan json.RawMessage, 1)
	pending[string(id)] = ch
	pendingMu.Unlock()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": p.Method, "params": p.Params})
	writeLine(b)
	reply(m.ID, map[string]any{"response": <-ch})
}
