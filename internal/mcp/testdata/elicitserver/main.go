// Command elicitserver is a small MCP server over stdio that asks its
// client for input during tool calls (MCP elicitation), for the tests of
// corvid's elicitation passthrough (docs/elicitation.md).
//
// Tools: ask_name (form mode: a required string "name" and an optional
// "color" choice; returns "hello NAME (COLOR)" on accept, else the action),
// open_login (url mode: elicitationId login-1; on accept it sends
// notifications/elicitation/complete and returns "login ACTION"), caps (the
// client's elicitation capabilities as JSON, "none" when absent). -protocol
// pins the protocol version.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func main() {
	protocol := flag.String("protocol", "", "the only protocol version to speak (2025-11-25: elicitation/create as a request during the call)")
	flag.Parse()
	var versions []string
	if *protocol != "" {
		versions = []string{*protocol}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "elicitserver", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: versions})
	// Both tools ask the way the 2026-07-28 protocol wants (multi
	// round-trip: the first call returns inputRequests, the retry carries
	// the answers); the SDK's server middleware turns that into a plain
	// elicitation/create request for clients on older versions.
	mcp.AddTool(s, &mcp.Tool{Name: "ask_name", Description: "Ask the user's name."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			ans, ok := req.Params.InputResponses["who"].(*mcp.ElicitResult)
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"who": &mcp.ElicitParams{Mode: "form", Message: "What is your name?",
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{` +
						`"name":{"type":"string","title":"Name","minLength":1},` +
						`"color":{"type":"string","title":"Favourite colour","enum":["red","green"]}},"required":["name"]}`)}}}, nil, nil
			}
			if ans.Action != "accept" {
				return text(ans.Action), nil, nil
			}
			return text(fmt.Sprintf("hello %v (%v)", ans.Content["name"], ans.Content["color"])), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "open_login", Description: "Send the user to a login page."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			ans, ok := req.Params.InputResponses["login"].(*mcp.ElicitResult)
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"login": &mcp.ElicitParams{Mode: "url", Message: "Log in to the example service",
					URL: "https://example.com/login?session=1", ElicitationID: "login-1"}}}, nil, nil
			}
			if ans.Action == "accept" {
				_ = req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: "login-1"})
			}
			return text("login " + ans.Action), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "caps", Description: "The client's elicitation capabilities."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			p := req.Session.InitializeParams()
			if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
				return text("none"), nil, nil
			}
			b, _ := json.Marshal(p.Capabilities.Elicitation)
			return text(string(b)), nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "elicitserver:", err)
		os.Exit(1)
	}
}
