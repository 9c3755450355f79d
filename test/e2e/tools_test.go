package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// toolScript calls one tool, then ends the turn with text.
func toolScript(name string, input map[string]any) map[string]any {
	return map[string]any{"responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "tool_call", "name": name, "input": input}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "finished"}}},
	}}
}

// toolStatuses lists the statuses a session's tool calls went through, in order.
func toolStatuses(ups []testkit.Update) []string {
	var out []string
	for _, u := range ups {
		if (u.SessionUpdate == "tool_call" || u.SessionUpdate == "tool_call_update") && u.Status != "" {
			out = append(out, u.Status)
		}
	}
	return out
}

func TestCancelWhilePermissionIsHeld(t *testing.T) {
	s := startCorvid(t, toolScript("write", map[string]any{"path": "notes.txt", "content": "x"}),
		testkit.Options{Permission: testkit.HoldPermission(nil, testkit.AllowOnce())})
	sid := s.ready(t, testkit.NewGasCity())
	p := s.CallAsync("session/prompt", testkit.TextPrompt(sid, "write"))
	if _, err := s.WaitPermission(s.ctx); err != nil {
		t.Fatal(err)
	}
	s.Cancel(sid) // the editor answers the held request "cancelled", as the spec requires
	res, rerr := p.Wait(s.ctx)
	if rerr != nil || !strings.Contains(string(res), `"cancelled"`) {
		t.Fatalf("prompt: %s %v, want stopReason cancelled", res, rerr)
	}
	s.stillUsable(t)
	for _, u := range s.Updates(sid) {
		if u.Seq > p.Seq() {
			t.Errorf("update after the prompt response: %s", u.Raw)
		}
	}
	if _, err := os.Stat(filepath.Join(s.workspace, "notes.txt")); err == nil {
		t.Error("the file was written after the permission was cancelled")
	}
}

// A host that sent no clientCapabilities (old Gas City) cannot answer
// session/request_permission: corvid writes the question as message text,
// keeps the turn open, and takes the answer from `corvid respond ID ...`.
func TestOldGasCityIsAskedOutOfBandAndAnsweredByRespond(t *testing.T) {
	for _, tc := range []struct {
		answer  string
		written bool
	}{{"deny", false}, {"allow", true}} {
		t.Run(tc.answer, func(t *testing.T) {
			s := startCorvid(t, toolScript("write", map[string]any{"path": "notes.txt", "content": "x"}), testkit.Options{NeverAnswer: true})
			if _, rerr := s.Initialize(s.ctx, testkit.OldGasCity()); rerr != nil {
				t.Fatal(rerr)
			}
			// The kit fails the test if corvid sends session/request_permission to this host.
			p, qid := askedOutOfBand(t, s, "write")
			// The turn stays open while the question waits: a later request is
			// answered while the prompt is not.
			s.stillUsable(t)
			for _, l := range s.Transcript() {
				if l.Dir == testkit.FromAgent && strings.Contains(l.Text, `"stopReason"`) {
					t.Fatalf("the prompt ended before the question was answered: %s", l.Text)
				}
			}
			cmd := exec.Command(testkit.BuildCorvid(t), "respond", qid, tc.answer)
			cmd.Env = s.Env()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("corvid respond: %v\n%s", err, out)
			}
			if res, rerr := p.Wait(s.ctx); rerr != nil || !strings.Contains(string(res), "end_turn") {
				t.Fatalf("prompt: %s %v", res, rerr)
			}
			_, statErr := os.Stat(filepath.Join(s.workspace, "notes.txt"))
			if written := statErr == nil; written != tc.written {
				t.Errorf("file written = %v after %q, want %v", written, tc.answer, tc.written)
			}
		})
	}
}

// askedOutOfBand opens a session on s (initialized as a host that cannot
// answer session/request_permission), sends prompt, and waits for the
// question corvid writes as message text; it returns the prompt's call and
// the question's id for `corvid respond`.
func askedOutOfBand(t *testing.T, s *session, prompt string) (*testkit.Pending, string) {
	t.Helper()
	sid := s.NewSession(s.ctx, s.workspace)
	p := s.CallAsync("session/prompt", testkit.TextPrompt(sid, prompt))
	u, err := s.WaitUpdate(s.ctx, func(u testkit.Update) bool {
		return u.SessionUpdate == "agent_message_chunk" && strings.Contains(testkit.TextOf([]testkit.Update{u}, "agent_message_chunk"), "corvid respond ")
	})
	if err != nil {
		t.Fatalf("no out-of-band question: %v", err)
	}
	id := regexp.MustCompile(`corvid respond (q\w+) allow`).FindStringSubmatch(testkit.TextOf([]testkit.Update{u}, "agent_message_chunk"))
	if id == nil {
		t.Fatalf("question names no request id: %s", u.Raw)
	}
	return p, id[1]
}

func TestOperatorFlagsApproveWithoutAsking(t *testing.T) {
	for _, args := range [][]string{{"--yolo"}, {"--allow", "write"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			s := startCorvid(t, toolScript("write", map[string]any{"path": "notes.txt", "content": "x"}), testkit.Options{Permission: testkit.RejectOnce()}, args...)
			sid := s.ready(t, testkit.Minimal())
			if stop, rerr := s.Prompt(s.ctx, sid, "write"); rerr != nil || stop != "end_turn" {
				t.Fatalf("prompt: %q %v", stop, rerr)
			}
			if n := len(s.Permissions()); n != 0 {
				t.Errorf("%d permission requests under %v", n, args)
			}
			if _, err := os.Stat(filepath.Join(s.workspace, "notes.txt")); err != nil {
				t.Errorf("not written: %v", err)
			}
		})
	}
}

func TestShellRunsInTheClientTerminalWhenAdvertised(t *testing.T) {
	s := startCorvid(t, toolScript("shell", map[string]any{"command": "echo from-shell"}), testkit.Options{})
	sid := s.ready(t, testkit.Zed())
	if stop, rerr := s.Prompt(s.ctx, sid, "run"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	terms := s.Terminals()
	if len(terms) != 1 {
		t.Fatalf("%d client terminals, want 1", len(terms))
	}
	if !strings.Contains(terms[0].Output, "from-shell") || !terms[0].Released {
		t.Errorf("terminal %+v: want the output and a release", terms[0])
	}
	embedded := false
	for _, u := range s.Updates(sid) {
		for _, c := range u.ToolContent {
			if c.Type == "terminal" && c.TerminalID == terms[0].ID {
				embedded = true
			}
		}
	}
	if !embedded {
		t.Error("the tool call does not embed the terminal")
	}
	if st := toolStatuses(s.Updates(sid)); len(st) == 0 || st[len(st)-1] != "completed" {
		t.Errorf("statuses %v", st)
	}
}

func TestShellRunsInProcessWhenTerminalIsNotAdvertised(t *testing.T) {
	s := startCorvid(t, toolScript("shell", map[string]any{"command": "echo in-process"}), testkit.Options{})
	sid := s.ready(t, testkit.Emacs()) // no terminal key at all
	if stop, rerr := s.Prompt(s.ctx, sid, "run"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	var out string
	for _, u := range testkit.OfKind(s.Updates(sid), "tool_call_update") {
		out += string(u.Raw)
	}
	if !strings.Contains(out, "in-process") {
		t.Errorf("shell output missing from the tool call: %s", out)
	}
	if st := toolStatuses(s.Updates(sid)); len(st) == 0 || st[len(st)-1] != "completed" {
		t.Errorf("statuses %v", st)
	}
}

// An out-of-band question nobody answers is denied after interaction_timeout:
// a timeout is never consent.
func TestOutOfBandQuestionIsDeniedAfterTheInteractionTimeout(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "config"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte("interaction_timeout = \"300ms\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startCorvid(t, toolScript("write", map[string]any{"path": "notes.txt", "content": "x"}), testkit.Options{NeverAnswer: true, Env: []string{"CORVID_HOME=" + home}})
	if _, rerr := s.Initialize(s.ctx, testkit.OldGasCity()); rerr != nil {
		t.Fatal(rerr)
	}
	sid := s.NewSession(s.ctx, s.workspace)
	if stop, rerr := s.Prompt(s.ctx, sid, "write"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	// Ordering, not a clock: the question was put (and so waited) before the denial.
	got := testkit.TextOf(s.Updates(sid), "agent_message_chunk")
	if q, d := strings.Index(got, "corvid respond "), strings.LastIndex(got, "denied"); q < 0 || d < q {
		t.Errorf("want the out-of-band question before the denial; the user saw %q", got)
	}
	if _, err := os.Stat(filepath.Join(s.workspace, "notes.txt")); err == nil {
		t.Error("the file was written although nobody answered")
	}
	if got := testkit.TextOf(s.Updates(sid), "agent_message_chunk"); !strings.Contains(got, "denied") {
		t.Errorf("the user is not told the request was denied: %q", got)
	}
}
