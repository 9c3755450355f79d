package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The client session's own edge cases, against the go-sdk's server where
// it can produce the case, else against a scripted peer on raw pipes.

// pipes connects a client transport to a server's end: what the client
// sends, the server reads from srvIn; what the server writes to srvOut,
// the client receives.
func pipes(t *testing.T) (client transport, srvIn *os.File, srvOut *os.File) {
	t.Helper()
	c2sR, c2sW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s2cR, s2cW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, f := range []*os.File{c2sR, c2sW, s2cR, s2cW} {
			f.Close()
		}
	})
	client = &stdioTransport{
		in:     &jsonLines{r: bufio.NewReader(s2cR), log: slog.New(slog.DiscardHandler), server: "test"},
		out:    s2cR,
		w:      c2sW,
		closed: make(chan struct{}),
	}
	return client, c2sR, s2cW
}

// sdkServer serves s over a pipe and returns an initialized client
// session on it.
func sdkServer(t *testing.T, s *sdk.Server, h clientHandler) *session {
	t.Helper()
	tr, in, out := pipes(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go s.Run(ctx, &sdk.IOTransport{Reader: in, Writer: out})
	cs := newSession(tr, h, slog.New(slog.DiscardHandler))
	t.Cleanup(func() { cs.Close() })
	if err := cs.initialize(ctx, initializeParams{ClientInfo: implementation{Name: "test", Version: "1"}}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return cs
}

// noHandler handles nothing: every server request is -32601.
type noHandler struct{}

func (noHandler) request(context.Context, string, json.RawMessage) (any, error) {
	return nil, errMethodNotFound
}
func (noHandler) notify(string, json.RawMessage) {}

func TestSessionCancelTellsTheServer(t *testing.T) {
	started, stopped := make(chan struct{}), make(chan error, 1)
	s := sdk.NewServer(&sdk.Implementation{Name: "srv", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "wait"}, func(ctx context.Context, _ *sdk.CallToolRequest, _ map[string]any) (*sdk.CallToolResult, any, error) {
		close(started)
		<-ctx.Done()
		stopped <- ctx.Err()
		return nil, nil, ctx.Err()
	})
	cs := sdkServer(t, s, noHandler{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	err := cs.call(ctx, "tools/call", callToolParams{Name: "wait", Arguments: map[string]any{}}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled call returned %v, want context.Canceled", err)
	}
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the server's handler ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server never heard notifications/cancelled: its handler still runs")
	}
	// The session goes on.
	if err := cs.call(context.Background(), "ping", struct{}{}, nil); err != nil {
		t.Errorf("ping after the cancel: %v", err)
	}
}

func TestSessionAnswersAnUnofferedServerRequestMethodNotFound(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "srv", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "roots"}, func(ctx context.Context, req *sdk.CallToolRequest, _ map[string]any) (*sdk.CallToolResult, any, error) {
		_, err := req.Session.ListRoots(ctx, nil)
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint(werr.Code)}}}, nil, nil
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("error %v", err)}}}, nil, nil
	})
	cs := sdkServer(t, s, noHandler{})
	var res callToolResult
	if err := cs.call(context.Background(), "tools/call", callToolParams{Name: "roots", Arguments: map[string]any{}}, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || res.Content[0].Text != "-32601" {
		t.Errorf("the server's roots/list got %+v, want error code -32601", res.Content)
	}
}

func TestSessionReadsEveryPage(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "srv", Version: "1"}, &sdk.ServerOptions{PageSize: 2})
	var want []string
	for i := range 7 {
		name := fmt.Sprintf("t%d", i)
		want = append(want, name)
		sdk.AddTool(s, &sdk.Tool{Name: name}, func(context.Context, *sdk.CallToolRequest, map[string]any) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{}, nil, nil
		})
		s.AddPrompt(&sdk.Prompt{Name: "p" + name}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{}, nil
		})
		s.AddResource(&sdk.Resource{URI: "mem://" + name, Name: name}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{}, nil
		})
		s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "mem://" + name + "/{x}", Name: name}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{}, nil
		})
	}
	cs := sdkServer(t, s, noHandler{})
	ctx := context.Background()
	tools, err := cs.tools(ctx)
	if err != nil || len(tools) != 7 {
		t.Fatalf("tools: %d, %v; want 7", len(tools), err)
	}
	prompts, err := cs.prompts(ctx)
	if err != nil || len(prompts) != 7 {
		t.Errorf("prompts: %d, %v; want 7", len(prompts), err)
	}
	resources, err := cs.resources(ctx)
	if err != nil || len(resources) != 7 {
		t.Errorf("resources: %d, %v; want 7", len(resources), err)
	}
	templates, err := cs.resourceTemplates(ctx)
	if err != nil || len(templates) != 7 {
		t.Errorf("resource templates: %d, %v; want 7", len(templates), err)
	}
	var got []string
	for _, tl := range tools {
		got = append(got, tl.Name)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("tools %v, want %v", got, want)
	}
}

// scripted is a peer on raw pipes: it answers initialize, then runs
// script with each further message the client sends.
func scripted(t *testing.T, version string, script func(msg wireMsg, reply func(string))) *session {
	t.Helper()
	tr, in, out := pipes(t)
	reply := func(s string) { fmt.Fprintln(out, s) }
	go func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			var m wireMsg
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			if m.Method == "initialize" {
				reply(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}}`, m.ID, version))
				continue
			}
			script(m, reply)
		}
	}()
	cs := newSession(tr, noHandler{}, slog.New(slog.DiscardHandler))
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestSessionIgnoresAnAnswerToAnUnknownID(t *testing.T) {
	cs := scripted(t, protocolVersion, func(m wireMsg, reply func(string)) {
		if m.Method == "tools/list" {
			reply(`{"jsonrpc":"2.0","id":987654,"result":{"tools":[{"name":"stray"}]}}`)
			reply(`{"jsonrpc":"2.0","id":"not a number","result":{}}`)
			reply(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"mine"}]}}`, m.ID))
		}
	})
	if err := cs.initialize(context.Background(), initializeParams{}); err != nil {
		t.Fatal(err)
	}
	tools, err := cs.tools(context.Background())
	if err != nil || len(tools) != 1 || tools[0].Name != "mine" {
		t.Errorf("tools = %v, %v; want the answer to the request", tools, err)
	}
}

func TestSessionAnswersAnUnknownServerRequest(t *testing.T) {
	answered := make(chan wireMsg, 1)
	cs := scripted(t, protocolVersion, func(m wireMsg, reply func(string)) {
		switch {
		case m.Method == "notifications/initialized":
			reply(`{"jsonrpc":"2.0","id":"q1","method":"no/such/method","params":{}}`)
		case m.Method == "" && string(m.ID) == `"q1"`:
			answered <- m
		}
	})
	if err := cs.initialize(context.Background(), initializeParams{}); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-answered:
		if m.Error == nil || m.Error.Code != codeMethodNotFound || m.Result != nil {
			t.Errorf("answer %+v, want error -32601", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer to the server's request")
	}
}

func TestSessionFailsACallWhenTheServerCloses(t *testing.T) {
	tr, in, out := pipes(t)
	go func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			var m wireMsg
			json.Unmarshal(sc.Bytes(), &m)
			if m.Method == "initialize" {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}`+"\n", m.ID)
			}
			if m.Method == "tools/call" {
				out.Close() // gone mid-call
			}
		}
	}()
	cs := newSession(tr, noHandler{}, slog.New(slog.DiscardHandler))
	defer cs.Close()
	if err := cs.initialize(context.Background(), initializeParams{}); err != nil {
		t.Fatal(err)
	}
	err := cs.call(context.Background(), "tools/call", callToolParams{Name: "x"}, nil)
	if err == nil || !strings.Contains(err.Error(), "closed the connection") {
		t.Errorf("a call cut by the server's end returned %v", err)
	}
	if err := cs.Wait(); err != nil && !errors.Is(err, io.EOF) {
		t.Errorf("Wait after an orderly end = %v", err)
	}
	if err := cs.call(context.Background(), "ping", struct{}{}, nil); err == nil {
		t.Error("a call after the end succeeded")
	}
}

func TestSessionRefusesAnUnknownProtocolVersion(t *testing.T) {
	cs := scripted(t, "1999-01-01", func(wireMsg, func(string)) {})
	err := cs.initialize(context.Background(), initializeParams{})
	if err == nil || !strings.Contains(err.Error(), `"1999-01-01"`) {
		t.Errorf("initialize with a server of an unknown version: %v", err)
	}
}

func TestSessionKeepsTheServersErrorAnswer(t *testing.T) {
	cs := scripted(t, "2024-11-05", func(m wireMsg, reply func(string)) {
		if m.Method == "tools/call" {
			reply(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"no way","data":{"why":"because"}}}`, m.ID))
		}
	})
	if err := cs.initialize(context.Background(), initializeParams{}); err != nil {
		t.Fatal(err)
	}
	err := cs.call(context.Background(), "tools/call", callToolParams{Name: "x"}, nil)
	var rerr *rpcError
	if !errors.As(err, &rerr) || rerr.Code != -32000 || rerr.Message != "no way" || string(rerr.Data) != `{"why":"because"}` {
		t.Errorf("error answer = %#v", err)
	}
}
