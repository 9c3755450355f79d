package tui

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/corvid-agent/corvid/internal/acp"
)

var update = flag.Bool("update", false, "rewrite the golden frames in testdata/")

// Components are drawn into golden frames at 40, 80 and 140 columns, for a
// light and a dark terminal, and without colour. The frames keep their
// escape sequences: the colours are part of what is checked. Rewrite them
// with go test ./internal/tui/ -run Golden -update, and look at them with
// cat before committing.
func TestGoldenComponents(t *testing.T) {
	line := 12
	old := "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"
	card := &toolCall{id: "c1", title: "Edit main.go", kind: "edit", status: "completed",
		locations: []acp.ToolCallLocation{{Path: "cmd/hello/main.go", Line: &line}},
		content: []acp.ToolCallContent{{Type: "diff", Path: "cmd/hello/main.go", OldText: &old,
			NewText: "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello, world\")\n}\n"}}}
	shell := &toolCall{id: "c2", title: "go test ./...", kind: "execute", status: "failed",
		rawInput: []byte(`{"command":"go test ./..."}`),
		content: []acp.ToolCallContent{{Type: "content", Content: &acp.ContentBlock{Type: "text",
			Text: "ok  a\nok  b\nok  c\nok  d\nok  e\nok  f\nFAIL g\nexit status 1"}}}}
	running := &toolCall{id: "c4", title: "go test ./...", kind: "execute", status: "in_progress",
		rawInput: []byte(`{"command":"go test ./..."}`),
		content: []acp.ToolCallContent{{Type: "content", Content: &acp.ContentBlock{Type: "text",
			Text: "```\n…\nok  a 0.1s\nok  b 0.2s\nok  c 0.3s\nok  d 0.4s\nok  e 0.5s\nok  f 0.6s\nok  g 0.7s\n```"}}}}
	perm := &acp.RequestPermissionRequest{SessionID: "s", ToolCall: acp.ToolCallUpdate{ToolCallID: "c3",
		Title: "rm -rf build && go build ./...", Kind: "execute", RawInput: []byte(`{"command":"rm -rf build && go build ./..."}`)},
		Options: []acp.PermissionOption{{OptionID: "o1", Name: "Allow once", Kind: "allow_once"},
			{OptionID: "o2", Name: "Always allow `shell(go build*)`", Kind: "allow_always"},
			{OptionID: "o3", Name: "Reject", Kind: "reject_once"}, {OptionID: "o4", Name: "Always reject", Kind: "reject_always"}}}
	editPerm := &acp.RequestPermissionRequest{SessionID: "s", ToolCall: acp.ToolCallUpdate{ToolCallID: "c1",
		Title: "Edit main.go", Kind: "edit", Content: card.content},
		Options: perm.Options}
	plan := []acp.PlanEntry{{Content: "Read the failing test", Status: "completed"},
		{Content: "Fix the off-by-one in the pager so that the last page is shown in full", Status: "in_progress"},
		{Content: "Run the tests", Status: "pending"}}
	st := status{model: "anthropic:claude-sonnet-4-6", mode: "Default", title: "Fix the pager",
		used: 23_400, size: 200_000, cost: &acp.Cost{Amount: 0.0123, Currency: "USD"}, working: true}
	md := "# Title\n\nSome **bold**, *em* and `code`, a [link](https://example.com).\n\n- one\n- two with a long line that has to wrap somewhere near the end\n\n```go\nfunc f() {}\n```\n> quoted"

	code := "```go\n// Greet says hello.\nfunc Greet(name string) (int, error) {\n\treturn fmt.Printf(\"hello, %s\\n\", name) /* 2 values */\n}\n```\n" +
		"```python\ndef area(r: float) -> float:\n    \"\"\"The area.\"\"\"\n    return 3.14159 * r ** 2  # approx\n```\n" +
		"```json\n{\"name\": \"corvid\", \"port\": 8080, \"tls\": false}\n```\n" +
		"```sh\nexport GOFLAGS=-trimpath # build\nif [ -n \"$CI\" ]; then go test ./...; fi\n```"

	components := map[string]func(th *theme, w int) []string{
		"form": func(th *theme, w int) []string {
			req := &acp.CreateElicitationRequest{Mode: "form", Message: "Set up the service",
				RequestedSchema: json.RawMessage(formSchema)}
			fields, err := parseForm(req)
			if err != nil {
				t.Fatal(err)
			}
			f := &form{req: req, fields: fields, focus: 1, err: "Port: a whole number, please"}
			fields[0].sel, fields[0].chosen = 1, true
			fields[1].text = []rune("billing")
			fields[5].picked[2] = true
			return renderForm(th, f, w)
		},
		// Two members' lines, each behind its label, and one's card.
		"members": func(th *theme, w int) []string {
			m := newModel(Options{}, th)
			m.width, m.height, m.sessionID = w, 40, "s1"
			for _, u := range []any{
				acp.ContentChunk{SessionUpdate: "agent_message_chunk", Content: acp.TextBlock("The **pager** drops its last page; `pages()` rounds down.\n"), Meta: acp.Meta{memberMeta: memberTag("reviewer")}},
				acp.ContentChunk{SessionUpdate: "agent_message_chunk", Content: acp.TextBlock("- wrote the fix\n"), Meta: acp.Meta{memberMeta: memberTag("a-very-long-member-name")}},
				acp.ToolCallUpdate{SessionUpdate: "tool_call", ToolCallID: "x/c1", Title: "Read pager.go", Kind: "read", Status: "completed", Meta: acp.Meta{memberMeta: memberTag("reviewer")}},
			} {
				raw, _ := json.Marshal(u)
				m.applyUpdate(raw)
			}
			return m.printQ
		},
		// A collapsed thought: the live line while it streams, then the
		// summary it leaves in the scrollback.
		"thought": func(th *theme, w int) []string {
			m := newModel(Options{}, th)
			m.width, m.height, m.sessionID = w, 40, "s1"
			raw, _ := json.Marshal(acp.ContentChunk{SessionUpdate: "agent_thought_chunk",
				Content: acp.TextBlock("The pager drops the last page when the count divides evenly.\nCheck pages()\nthen the off-by-one in")})
			m.applyUpdate(raw)
			out := []string{m.thoughtSummary(m.live[0].(*textBlock), true)}
			m.closeText()
			m.drain()
			return append(out, m.printQ...)
		},
		"code": func(th *theme, w int) []string {
			r := markdown{th: th}
			var out []string
			for _, l := range strings.Split(code, "\n") {
				out = append(out, r.line(l, w)...)
			}
			return out
		},
		// corvid's login methods, as its initialize offers them to a TUI
		// that started it (loginpick.go); the second selected.
		"loginpicker": func(th *theme, w int) []string {
			m := newModel(Options{}, th)
			m.width = w
			m.ag = &agent{termAuth: true, argv: []string{"corvid", "acp"}, authMethods: parseAuthMethods(json.RawMessage(corvidLikeMethods))}
			m.openLoginPicker()
			m.picker.sel = 1
			return renderPicker(th, m.picker, w)
		},
		"toolcard":     func(th *theme, w int) []string { return renderToolCard(th, card, w) },
		"shell":        func(th *theme, w int) []string { return renderToolCard(th, shell, w) },
		"shellrunning": func(th *theme, w int) []string { return renderToolCard(th, running, w) },
		"diff": func(th *theme, w int) []string {
			return renderDiff(th, card.content[0].Path, card.content[0].OldText, card.content[0].NewText, w)
		},
		"permission":     func(th *theme, w int) []string { return renderPermission(th, perm, 1, w, "") },
		"editpermission": func(th *theme, w int) []string { return renderPermission(th, editPerm, 0, w, "") },
		"plan":           func(th *theme, w int) []string { return renderPlan(th, plan, w) },
		"status":         func(th *theme, w int) []string { return []string{renderStatus(th, st, w)} },
		"markdown": func(th *theme, w int) []string {
			r := markdown{th: th}
			var out []string
			for _, l := range strings.Split(md, "\n") {
				out = append(out, r.line(l, w)...)
			}
			return out
		},
	}
	themes := map[string]*theme{"dark": newTheme(true, true), "light": newTheme(false, true), "nocolor": newTheme(true, false)}
	for name, draw := range components {
		for tname, th := range themes {
			for _, w := range []int{40, 80, 140} {
				t.Run(fmt.Sprintf("%s/%s/%d", name, tname, w), func(t *testing.T) {
					lines := draw(th, w)
					for i, l := range lines {
						if n := ansi.StringWidth(l); n > w {
							t.Errorf("line %d is %d columns wide, over %d: %q", i, n, w, ansi.Strip(l))
						}
					}
					got := strings.Join(lines, "\n") + "\n"
					if tname == "nocolor" && strings.Contains(got, "38;") {
						t.Errorf("a colour without colour: %q", got)
					}
					path := filepath.Join("testdata", fmt.Sprintf("%s-%s-%d.golden", name, tname, w))
					if *update {
						if err := os.MkdirAll("testdata", 0o755); err != nil {
							t.Fatal(err)
						}
						if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
							t.Fatal(err)
						}
						return
					}
					want, err := os.ReadFile(path)
					if err != nil {
						t.Fatalf("%v (run with -update to create it)", err)
					}
					if got != string(want) {
						t.Errorf("frame differs from %s:\ngot:\n%s\nwant:\n%s", path, got, want)
					}
				})
			}
		}
	}
}
