package mcp

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/tool"
)

func TestToolNamesAreModelSafeShortAndUnique(t *testing.T) {
	n := newToolNamer()
	long := strings.Repeat("x", 80)
	got := []string{
		n.name("git hub", "search.issues"),
		n.name("git_hub", "search_issues"), // the same once sanitised
		n.name("git-hub", "list"),
		n.name("é", "ok"),
		n.name(long, "a"),
		n.name(long, "b"),
		n.name("", ""),
	}
	want := []string{"git_hub__search_issues", "git_hub__search_issues_2", "git-hub__list", "___ok"}
	if !reflect.DeepEqual(got[:4], want) {
		t.Errorf("names = %q, want %q", got[:4], want)
	}
	safe := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	seen := map[string]bool{}
	for _, name := range got {
		if !safe.MatchString(name) {
			t.Errorf("%q is not a model-safe name", name)
		}
		if seen[name] {
			t.Errorf("%q given twice", name)
		}
		seen[name] = true
	}
	if got[4] == got[5] || len(got[4]) != 64 {
		t.Errorf("long names %q, %q", got[4], got[5])
	}
}

func TestFromConfigInfersTheTransport(t *testing.T) {
	got := FromConfig(map[string]config.MCPServer{
		"b": {URL: "https://b.example/mcp", Headers: map[string]string{"X-Two": "2", "Authorization": "Bearer b"}},
		"a": {Command: "a-server", Args: []string{"--x"}, Env: map[string]string{"K": "v"}},
		"c": {URL: "https://c.example/sse", Type: "sse"},
	})
	want := []Server{
		{Name: "a", Type: TypeStdio, Command: "a-server", Args: []string{"--x"}, Env: []KV{{"K", "v"}}},
		{Name: "b", Type: TypeHTTP, URL: "https://b.example/mcp", Headers: []KV{{"Authorization", "Bearer b"}, {"X-Two", "2"}}},
		{Name: "c", Type: TypeSSE, URL: "https://c.example/sse"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FromConfig = %+v\nwant %+v", got, want)
	}
}

func TestMergeLetsTheEditorWin(t *testing.T) {
	editor := []Server{{Name: "github", URL: "editor"}, {Name: "fs", Command: "editor-fs"}}
	configured := []Server{{Name: "github", URL: "config"}, {Name: "db", Command: "db"}}
	got := Merge(editor, configured)
	want := []Server{{Name: "github", URL: "editor"}, {Name: "fs", Command: "editor-fs"}, {Name: "db", Command: "db"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Merge = %+v", got)
	}
}

func TestKindFollowsNameAndAnnotations(t *testing.T) {
	for _, tc := range []struct {
		name     string
		readOnly bool
		want     tool.Kind
	}{
		{"fetch_page", false, tool.KindFetch},
		{"downloadFile", true, tool.KindFetch},
		{"search_issues", true, tool.KindSearch},
		{"findReferences", false, tool.KindSearch},
		{"get_file_contents", true, tool.KindRead},
		{"create_issue", false, tool.KindOther},
		{"research", false, tool.KindOther}, // a word, not a substring
	} {
		def := fromSDK[toolDef](t, &sdk.Tool{Name: tc.name, Annotations: &sdk.ToolAnnotations{ReadOnlyHint: tc.readOnly}})
		if got := inferKind(def); got != tc.want {
			t.Errorf("%s (readOnly %v): kind %s, want %s", tc.name, tc.readOnly, got, tc.want)
		}
	}
}

func TestInputSchemaIsAlwaysAnObjectSchema(t *testing.T) {
	for in, want := range map[string]string{
		`null`:                                   `{"type":"object","properties":{}}`,
		`{"properties":{"a":{"type":"string"}}}`: `{"properties":{"a":{"type":"string"}},"type":"object"}`,
		`{"type":"object"}`:                      `{"properties":{},"type":"object"}`,
		`{"type":"object","properties":{},"required":["a"]}`:  `{"type":"object","properties":{},"required":["a"]}`,
		`{"type":"object","properties":{"b":{"type":"int"}}}`: `{"type":"object","properties":{"b":{"type":"int"}}}`,
	} {
		var s any
		json.Unmarshal([]byte(in), &s)
		var got, exp any
		json.Unmarshal(objectSchema(s), &got)
		json.Unmarshal([]byte(want), &exp)
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("objectSchema(%s) = %s, want %s", in, objectSchema(s), want)
		}
	}
}

func TestResultOfUnusualContent(t *testing.T) {
	res := toResult(fromSDK[callToolResult](t, &sdk.CallToolResult{Content: []sdk.Content{
		&sdk.AudioContent{MIMEType: "audio/wav", Data: []byte("abc")},
		&sdk.ResourceLink{URI: "file:///a.txt", Name: "a.txt", Description: "the a file"},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///b.bin", MIMEType: "application/octet-stream", Blob: []byte{1, 2}}},
		&sdk.ImageContent{MIMEType: "image/png", Data: []byte("png")},
	}}), false)
	for _, want := range []string{
		"[audio: audio/wav, 3 bytes, not shown]",
		"Resource link: a.txt <file:///a.txt>: the a file",
		"[resource file:///b.bin: application/octet-stream, 2 bytes of binary data, not shown]",
		"[image: image/png, 3 bytes, not shown: this model does not accept images]",
	} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output %q lacks %q", res.Output, want)
		}
	}

	empty := toResult(fromSDK[callToolResult](t, &sdk.CallToolResult{}), true)
	if empty.Output == "" || empty.IsError || len(empty.Content) != 1 {
		t.Errorf("empty result = %+v", empty)
	}
	failed := toResult(fromSDK[callToolResult](t, &sdk.CallToolResult{IsError: true}), true)
	if !failed.IsError || failed.Output == "" {
		t.Errorf("empty failure = %+v", failed)
	}

	big := toResult(fromSDK[callToolResult](t, &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("é", maxOutput)}}}), true)
	if len(big.Output) > maxOutput+100 || !strings.Contains(big.Output, "output truncated") {
		t.Errorf("a huge result is %d bytes", len(big.Output))
	}
}

func TestPromptWithSeveralRolesLabelsThem(t *testing.T) {
	got := flattenPrompt(fromSDK[getPromptResult](t, &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
		{Role: "user", Content: &sdk.TextContent{Text: "What is 2+2?"}},
		{Role: "assistant", Content: &sdk.TextContent{Text: "4"}},
		{Role: "user", Content: &sdk.TextContent{Text: "And 3+3?"}},
	}}))
	want := "user: What is 2+2?\n\nassistant: 4\n\nuser: And 3+3?"
	if got != want {
		t.Errorf("flattenPrompt = %q", got)
	}
}

func TestInvalidServersFailWithoutStarting(t *testing.T) {
	m, failures := Start(t.Context(), []Server{
		{Name: "", Command: "x"},
		{Name: "web", Type: TypeHTTP},
		{Name: "cmd"},
		{Name: "twice", Type: TypeHTTP, URL: "http://127.0.0.1:1/"},
		{Name: "twice", Command: "y"},
	}, Options{StartTimeout: 2e9})
	defer m.Close()
	var got []string
	for _, f := range failures {
		got = append(got, f.Err.Error())
	}
	want := []string{
		"an MCP server without a name cannot be started",
		`MCP server "web" failed to start: no URL given`,
		`MCP server "cmd" failed to start: no command given`,
	}
	if len(got) != 5 || !reflect.DeepEqual(got[:3], want) || got[4] != `MCP server "twice" is listed twice; the first entry is used` {
		t.Errorf("failures = %q", got)
	}
	if len(m.Tools()) != 0 || len(m.PIDs()) != 0 {
		t.Errorf("tools %v, pids %v", toolNames(m), m.PIDs())
	}
}
