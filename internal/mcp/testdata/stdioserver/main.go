// Command stdioserver is an MCP server over stdio for the tests of
// internal/mcp, written with the go-sdk, the oracle for corvid's own client.
//
// Tools: echo, crash (the process exits 3), add_tool (adds a tool at run
// time, so the server sends tools/list_changed), spawn (starts a child that
// sleeps, and returns its pid), rich (text, an image and an embedded
// resource), structured (structured content only), fail (a
// result with isError), wait (until cancelled), env (the value of
// MCP_TEST_VAR), progress (reports steps), roots (the client's roots),
// image_structured (an image and the same bytes as structured content).
// Prompt: greet, with a required argument name. Resource: mem://note.
//
// Flags change how it starts and ends: -fail writes a line to stderr and
// exits 1; -hang never answers; -linger ignores SIGTERM and stays after its
// stdin closed; -sleep only sleeps (the child of spawn); -banner writes a
// line that is not JSON-RPC to stdout first; -instructions sets the
// server's instructions; -gate waits for a file to exist before serving;
// -marker creates a file when it answers its first request (the handshake).
package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 1×1 PNG.
var pixel = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

func main() {
	fail := flag.Bool("fail", false, "write to stderr and exit 1")
	hang := flag.Bool("hang", false, "never answer")
	linger := flag.Bool("linger", false, "ignore SIGTERM and stay after stdin closes")
	sleep := flag.Bool("sleep", false, "only sleep")
	banner := flag.Bool("banner", false, "write a line that is not JSON-RPC to stdout first")
	instructions := flag.String("instructions", "", "the server's instructions")
	protocol := flag.String("protocol", "", "the only protocol version to speak (e.g. 2025-11-25, which has roots/list)")
	delay := flag.Duration("delay", 0, "wait this long before serving")
	gate := flag.String("gate", "", "wait until this file exists before serving")
	marker := flag.String("marker", "", "create this file when answering the first request (the handshake)")
	flag.Parse()
	time.Sleep(*delay)
	for *gate != "" {
		if _, err := os.Stat(*gate); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}

	switch {
	case *sleep:
		time.Sleep(time.Hour)
		return
	case *fail:
		fmt.Fprintln(os.Stderr, "stdioserver: bad configuration")
		os.Exit(1)
	case *hang:
		time.Sleep(time.Hour)
		return
	}
	if *linger {
		signal.Ignore(syscall.SIGTERM)
	}
	fmt.Fprintln(os.Stderr, "stdioserver: ready")
	if *banner {
		fmt.Println("stdioserver 1.0 starting (this line is not JSON-RPC)")
	}

	// The client's roots, as last listed: when the session began and
	// whenever the client says they changed.
	var rootsMu sync.Mutex
	var roots []string
	var listing sync.Mutex // one listing at a time, so the last one wins
	listRoots := func(ctx context.Context, ss *mcp.ServerSession) {
		listing.Lock()
		defer listing.Unlock()
		res, err := ss.ListRoots(ctx, nil)
		var uris []string
		if err != nil {
			uris = []string{"error: " + err.Error()}
		} else {
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
		}
		rootsMu.Lock()
		roots = uris
		rootsMu.Unlock()
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "stdioserver", Version: "1"}, &mcp.ServerOptions{
		Instructions:              *instructions,
		SupportedProtocolVersions: versions(*protocol),
		InitializedHandler: func(ctx context.Context, req *mcp.InitializedRequest) {
			if caps := req.Session.InitializeParams().Capabilities; caps == nil || caps.RootsV2 == nil {
				rootsMu.Lock()
				roots = []string{"the client has no roots capability"}
				rootsMu.Unlock()
				return
			}
			go listRoots(context.Background(), req.Session)
		},
		RootsListChangedHandler: func(ctx context.Context, req *mcp.RootsListChangedRequest) {
			go listRoots(context.Background(), req.Session)
		},
	})
	type progressIn struct {
		Steps int `json:"steps"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "Report progress in steps."},
		func(ctx context.Context, req *mcp.CallToolRequest, in progressIn) (*mcp.CallToolResult, any, error) {
			token := req.Params.GetProgressToken()
			for i := 1; i <= in.Steps && token != nil; i++ {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: float64(in.Steps), Message: fmt.Sprintf("step %d", i)})
				time.Sleep(300 * time.Millisecond)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("done; token %v", token)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "roots", Description: "The client's roots as last listed.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			rootsMu.Lock()
			defer rootsMu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(roots, " ")}}}, nil, nil
		})
	type imageOut struct {
		Data     string `json:"data"`
		MIMEType string `json:"mimeType"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "image_structured", Description: "An image, and the same as structured content."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, imageOut, error) {
			big := bytes.Repeat(pixel, 100)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: big}}},
				imageOut{Data: base64.StdEncoding.EncodeToString(big), MIMEType: "image/png"}, nil
		})
	s.AddResource(&mcp.Resource{URI: "mem://note", Name: "note", MIMEType: "text/plain", Description: "A note."},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "mem://note", MIMEType: "text/plain", Text: "the note's text"}}}, nil
		})
	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exit the server."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "stdioserver: crashing")
			os.Exit(3)
			return nil, nil, nil
		})
	type addIn struct {
		Name string `json:"name"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add_tool", Description: "Add a tool."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
			name := in.Name
			s.AddTool(&mcp.Tool{Name: name, Description: "Added at run time.", InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "I am " + name}}}, nil
				})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added " + name}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "spawn", Description: "Start a sleeping child."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			cmd := exec.Command(os.Args[0], "-sleep")
			if err := cmd.Start(); err != nil {
				return nil, nil, err
			}
			go cmd.Wait()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(cmd.Process.Pid)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "rich", Description: "Return every kind of content.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{
				Content: []mcp.Content{
					&mcp.TextContent{Text: "some text"},
					&mcp.ImageContent{MIMEType: "image/png", Data: pixel},
					&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "the notes"}},
				},
			}, nil, nil
		})
	type structOut struct {
		Count int    `json:"count"`
		Label string `json:"label"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "structured", Description: "Return structured content only."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, structOut, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{}}, structOut{Count: 3, Label: "three"}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fail."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it went wrong"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "wait", Description: "Wait until cancelled."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-time.After(time.Minute):
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "waited"}}}, nil, nil
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Return MCP_TEST_VAR."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: os.Getenv("MCP_TEST_VAR")}}}, nil, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greet someone.", Arguments: []*mcp.PromptArgument{{Name: "name", Description: "who", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Please greet " + req.Params.Arguments["name"] + " warmly."}},
			}}, nil
		})

	if *marker != "" {
		var once sync.Once
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(ctx, method, req)
				// The first request is the handshake (initialize, or
				// server/discover in newer protocol versions).
				once.Do(func() { _ = os.WriteFile(*marker, []byte("answered "+method+"\n"), 0o644) })
				return res, err
			}
		})
	}
	err := s.Run(context.Background(), &mcp.StdioTransport{})
	if *linger {
		time.Sleep(time.Hour)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stdioserver:", err)
		os.Exit(1)
	}
}

func versions(v string) []string {
	if v == "" {
		return nil
	}
	return []string{v}
}
