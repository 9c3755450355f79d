package e2e

import (
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// A turn that fails is stored with the error the editor was told and
// titled from its prompt; a session opened and never prompted (a host's
// probe) is left out of `corvid sessions list` unless --all; the list and
// `show` give each session's turns, tokens, cost and last error.
func TestSessionsListAndShowReportFailedTurnsTokensAndHideProbes(t *testing.T) {
	home := t.TempDir()
	opts := testkit.Options{Env: []string{"CORVID_HOME=" + home}}
	// The scripted model's responses start over in each session: each
	// session gets its own process and script.
	failing := map[string]any{"responses": []any{
		map[string]any{"parts": []any{}, "error": map[string]any{"message": "the upstream model exploded", "status": 400}},
	}}
	s := startCorvid(t, failing, opts)
	doomed := s.ready(t, testkit.Zed())
	if _, rerr := s.Prompt(s.ctx, doomed, "a doomed prompt"); rerr == nil {
		t.Fatal("the scripted failure did not fail the turn")
	} else if !strings.Contains(rerr.Message, "exploded") {
		t.Fatalf("turn error %q does not carry the provider's message", rerr.Message)
	}
	if code, _ := s.Close(); code != 0 {
		t.Fatalf("exit %d\n%s", code, s.Stderr())
	}
	working := map[string]any{"responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "fine"}}, "usage": map[string]any{"inputTokens": 1500, "outputTokens": 20}},
	}}
	s = startCorvid(t, working, opts)
	fine := s.ready(t, testkit.Zed())
	if stop, rerr := s.Prompt(s.ctx, fine, "a fine prompt"); rerr != nil || stop != "end_turn" {
		t.Fatalf("second prompt: %v %v", stop, rerr)
	}
	probe := s.NewSession(s.ctx, s.workspace)
	if code, _ := s.Close(); code != 0 {
		t.Fatalf("exit %d\n%s", code, s.Stderr())
	}

	cli := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(testkit.BuildCorvid(t), args...)
		cmd.Env = s.Env()
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("corvid %v: %v\n%s", args, err, out)
		}
		return string(out)
	}

	table := cli("sessions", "list")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) < 3 || !strings.Contains(lines[0], "TOKENS") || !strings.Contains(lines[0], "COST") || !strings.Contains(lines[0], "LAST ERROR") {
		t.Fatalf("sessions list:\n%s", table)
	}
	row := func(id string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, id) {
				return l
			}
		}
		return ""
	}
	if r := row(doomed); !strings.Contains(r, "a doomed prompt") || !strings.Contains(r, "exploded") || strings.Contains(r, "(untitled)") {
		t.Errorf("the failed session's row %q lacks its prompt as title or its error", r)
	}
	if r := row(fine); !strings.Contains(r, "1.5k") || strings.Contains(r, "exploded") {
		t.Errorf("the fine session's row %q lacks its 1,520 tokens or shows another's error", r)
	}
	if row(probe) != "" || !strings.Contains(table, "1 sessions opened without a prompt are not listed") {
		t.Errorf("the probe session is listed, or its hiding is not said:\n%s", table)
	}
	if all := cli("sessions", "list", "--all"); !strings.Contains(all, probe) {
		t.Errorf("--all leaves out the probe session:\n%s", all)
	}

	var list []struct {
		ID        string `json:"id"`
		Turns     int    `json:"turns"`
		LastError string `json:"lastError"`
		Tokens    struct {
			Input  int64 `json:"inputTokens"`
			Output int64 `json:"outputTokens"`
		} `json:"tokens"`
	}
	if err := json.Unmarshal([]byte(cli("sessions", "list", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	for _, l := range list {
		switch l.ID {
		case doomed:
			if l.Turns != 1 || !strings.Contains(l.LastError, "exploded") {
				t.Errorf("--json for the failed session: %+v", l)
			}
		case fine:
			if l.Turns != 1 || l.LastError != "" || l.Tokens.Input != 1500 || l.Tokens.Output != 20 {
				t.Errorf("--json for the fine session: %+v", l)
			}
		case probe:
			t.Errorf("--json lists the probe session")
		}
	}

	show := cli("sessions", "show", doomed)
	if !strings.Contains(show, "The last turn failed: ") || !strings.Contains(show, "Error:\n  ") || !strings.Contains(show, "exploded") {
		t.Errorf("sessions show of the failed session does not show its error:\n%s", show)
	}
	if show := cli("sessions", "show", fine); !strings.Contains(show, "1 turn; tokens: 1500 input, 20 output") || strings.Contains(show, "failed") {
		t.Errorf("sessions show of the fine session:\n%s", show)
	}
}

// CodeBuddy C12: `corvid sessions export --format jsonl` carries each
// turn's id where CodeBuddy's JSONL has it, providerData.conversationRequestId,
// on every line of that turn (its prompt, the answer, the tool call, the
// model-context records); the session's header line has none.
func TestSessionsExportJSONLCarriesEachTurnsConversationRequestID(t *testing.T) {
	home := t.TempDir()
	script := map[string]any{"responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "tool_call", "name": "read", "input": map[string]any{"path": "notes.txt"}}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "first answer"}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "second answer"}}},
	}}
	s := startCorvid(t, script, testkit.Options{Env: []string{"CORVID_HOME=" + home}, Permission: testkit.AllowOnce()})
	sid := s.ready(t, testkit.Zed())
	ids := []string{"0198a1b2c3d47e5f8a9b0c1d2e3f4a5b", "0198a1b2c3d47e5f9a9b0c1d2e3f4a5c"}
	for i, id := range ids {
		if _, rerr := s.promptWithMeta(sid, "turn "+strconv.Itoa(i), map[string]any{turnIDKey: id}); rerr != nil {
			t.Fatalf("prompt %d: %v", i, rerr)
		}
	}
	if code, _ := s.Close(); code != 0 {
		t.Fatalf("exit %d\n%s", code, s.Stderr())
	}
	cmd := exec.Command(testkit.BuildCorvid(t), "sessions", "export", sid, "--format", "jsonl")
	cmd.Env = s.Env()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("corvid sessions export: %v\n%s", err, out)
	}
	type line struct {
		Kind         string          `json:"kind"`
		Payload      json.RawMessage `json:"payload"`
		ProviderData *struct {
			ConversationRequestID string `json:"conversationRequestId"`
		} `json:"providerData"`
	}
	var lines []line
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var v line
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		lines = append(lines, v)
	}
	if len(lines) < 2 || lines[0].Kind != "session" || lines[0].ProviderData != nil {
		t.Fatalf("header line %+v, want the session's metadata without providerData", lines[0])
	}
	turn := -1
	seen := map[string]int{}
	for i, l := range lines[1:] {
		if l.Kind == "user_message_chunk" && (turn < 0 || !strings.Contains(string(lines[i].Payload), "user_message_chunk")) {
			turn++
		}
		if turn < 0 {
			continue // rows before the first prompt (none expected)
		}
		if l.ProviderData == nil || l.ProviderData.ConversationRequestID != ids[turn] {
			t.Errorf("line %d (%s) of turn %d: providerData %+v, want conversationRequestId %s", i+1, l.Kind, turn, l.ProviderData, ids[turn])
			continue
		}
		seen[l.Kind+"/"+strconv.Itoa(turn)]++
	}
	for _, want := range []string{"user_message_chunk/0", "tool_call/0", "agent_message_chunk/0", "context/0", "user_message_chunk/1", "agent_message_chunk/1"} {
		if seen[want] == 0 {
			t.Errorf("no %s line carries the turn's id (seen %v)", want, seen)
		}
	}
}
