package tui_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const editScript = `{"responses": [
  {"parts": [{"type": "text", "text": "I will create notes.txt."},
             {"type": "tool_call", "name": "write", "input": {"path": "notes.txt", "content": "written by corvid\n"}}]},
  {"parts": [{"type": "text", "text": "Finished with notes.txt."}]}
], "onExhausted": "repeat-last"}`

// The first thing a user does: type a prompt, see the answer stream in.
func TestPromptShowsStreamedAnswer(t *testing.T) {
	s := newSession(t)
	model := s.script("hello.json", `{"chunkSize": 4, "delayMs": 2, "responses": [
	  {"parts": [{"type": "thinking", "text": "Greet back."}, {"type": "text", "text": "Hello from the **scripted** model."}]}]}`)
	tm := s.open(80, 24, []string{"CORVID_MODEL=" + model}) // bare corvid in a terminal
	tm.ready()
	tm.typeText("hi there")
	tm.keys("Enter")
	tm.waitFor("Hello from the scripted model.")
	out := tm.idle()
	for _, want := range []string{"› hi there", "Greet back."} {
		if !strings.Contains(out, want) {
			t.Errorf("the pane lacks %q:\n%s", want, out)
		}
	}
}

// y allows the write once; n rejects it and the file is not written.
func TestPermissionYesAndNo(t *testing.T) {
	for _, c := range []struct {
		key, verdict string
		written      bool
	}{{"y", "Allow once", true}, {"n", "Reject", false}} {
		t.Run(c.key, func(t *testing.T) {
			s := newSession(t)
			tm := s.open(80, 30, nil, "tui", "-m", s.script("edit.json", editScript))
			tm.ready()
			tm.typeText("write the notes")
			tm.keys("Enter")
			q := tm.waitFor("[r/4]")
			for _, want := range []string{"Allow edit", "notes.txt", "+written by corvid", "[y/1]", "[a/2]", "[n/3]"} {
				if !strings.Contains(q, want) {
					t.Errorf("the question lacks %q:\n%s", want, q)
				}
			}
			tm.keys(c.key)
			tm.waitFor("→ " + c.verdict)
			tm.waitFor("Finished with notes.txt.")
			b, err := os.ReadFile(filepath.Join(s.dir, "notes.txt"))
			if c.written && (err != nil || string(b) != "written by corvid\n") {
				t.Errorf("after %s: notes.txt = %q, %v", c.key, b, err)
			}
			if !c.written && err == nil {
				t.Errorf("after %s: notes.txt was written", c.key)
			}
		})
	}
}

// Esc mid-stream cancels the turn (session/cancel) and the input stays
// usable.
func TestEscCancelsMidStream(t *testing.T) {
	s := newSession(t)
	model := s.script("slow.json", `{"chunkSize": 1, "delayMs": 20, "responses": [
	  {"parts": [{"type": "text", "text": "tick tock tick tock tick tock tick tock tick tock tick tock tick tock tick tock tick tock tick tock THE END"}]},
	  {"parts": [{"type": "text", "text": "Second answer."}]}]}`)
	tm := s.open(80, 24, nil, "tui", "-m", model)
	tm.ready()
	tm.typeText("go slowly")
	tm.keys("Enter")
	tm.waitFor("tick tock")
	tm.keys("Escape")
	out := tm.waitFor("⊘ cancelled")
	if strings.Contains(out, "THE END") {
		t.Errorf("the answer ran to its end after Esc:\n%s", out)
	}
	tm.idle()
	tm.typeText("again")
	tm.keys("Enter")
	tm.waitFor("Second answer.")
}

// Ctrl+D on an empty input quits with status 0, and the terminal is left
// as it was (the shell's next line prints in the normal screen).
func TestCtrlDQuitsWithZero(t *testing.T) {
	s := newSession(t)
	tm := s.open(80, 24, nil, "tui", "-m", s.script("edit.json", editScript))
	tm.ready()
	tm.keys("C-d")
	tm.waitFor("EXIT=0")
}

// Ctrl+C twice on an empty input quits with status 0.
func TestCtrlCTwiceQuits(t *testing.T) {
	s := newSession(t)
	tm := s.open(80, 24, nil, "tui", "-m", s.script("edit.json", editScript))
	tm.ready()
	tm.typeText("draft")
	tm.keys("C-c") // clears the input
	tm.waitUntil("the input to clear", func(string) bool { return !strings.Contains(tm.screen(), "draft") })
	tm.keys("C-c")
	tm.waitFor("Ctrl+C again to quit")
	tm.keys("C-c")
	tm.waitFor("EXIT=0")
}

// -c opens the newest session of the directory with its transcript.
func TestContinueShowsPreviousTranscript(t *testing.T) {
	s := newSession(t)
	model := s.script("hello.json", `{"responses": [{"parts": [{"type": "text", "text": "The first answer."}]}], "onExhausted": "repeat-last"}`)
	tm := s.open(80, 24, nil, "tui", "-m", model)
	tm.ready()
	tm.typeText("remember the number 42")
	tm.keys("Enter")
	tm.waitFor("The first answer.")
	tm.idle()
	tm.keys("C-d")
	tm.waitFor("EXIT=0")

	tm2 := s.open(80, 24, nil, "tui", "-m", model, "-c")
	out := tm2.waitFor("loaded ──")
	for _, want := range []string{"› remember the number 42", "The first answer."} {
		if !strings.Contains(out, want) {
			t.Errorf("-c does not show %q:\n%s", want, out)
		}
	}
	tm2.ready()
}

var sgr = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// colourCodes lists the SGR colour parameters in s (foreground or
// background, not the defaults 39 and 49).
func colourCodes(s string) []string {
	var out []string
	for _, m := range sgr.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			n, _ := strconv.Atoi(p)
			if (n >= 30 && n <= 38) || (n >= 40 && n <= 48) || (n >= 90 && n <= 107) {
				out = append(out, m[0])
			}
		}
	}
	return out
}

// NO_COLOR: no colour at all. Without it, the same screen has colours (so
// the check can fail).
func TestNoColor(t *testing.T) {
	for _, noColor := range []bool{false, true} {
		t.Run(fmt.Sprint("NO_COLOR=", noColor), func(t *testing.T) {
			s := newSession(t)
			var env []string
			if noColor {
				env = []string{"NO_COLOR=1"}
			}
			tm := s.open(80, 30, env, "tui", "-m", s.script("edit.json", editScript))
			tm.ready()
			tm.typeText("write the notes")
			tm.keys("Enter")
			tm.waitFor("[r/4]")
			codes := colourCodes(tm.colours())
			if noColor && len(codes) > 0 {
				t.Errorf("NO_COLOR, yet colours: %q", codes)
			}
			if !noColor && len(codes) == 0 {
				t.Errorf("no colours without NO_COLOR: the check cannot fail")
			}
			tm.keys("n")
			tm.waitFor("Finished with notes.txt.")
		})
	}
}

// A 40-column terminal: the question, its options and the answer fit.
func TestFortyColumns(t *testing.T) {
	s := newSession(t)
	tm := s.open(40, 30, nil, "tui", "-m", s.script("edit.json", editScript))
	tm.ready()
	tm.typeText("write the notes, and say when it is done")
	tm.keys("Enter")
	q := tm.waitFor("[r/4]")
	for _, want := range []string{"[y/1] Allow once", "[n/3] Reject", "+written by corvid"} {
		if !strings.Contains(q, want) {
			t.Errorf("at 40 columns the question lacks %q:\n%s", want, q)
		}
	}
	tm.keys("y")
	out := tm.waitFor("Finished with notes.txt.")
	for _, l := range strings.Split(out, "\n") {
		if len([]rune(l)) > 40 {
			t.Errorf("line wider than 40 columns: %q", l)
		}
	}
}

// A bracketed paste of 500 lines never sends, shows as a placeholder, and
// Enter sends it whole.
func TestBracketedPasteOf500Lines(t *testing.T) {
	s := newSession(t)
	tm := s.open(80, 24, nil, "tui", "-m", s.script("hello.json", `{"responses": [{"parts": [{"type": "text", "text": "Got it."}]}]}`))
	tm.ready()
	var b strings.Builder
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&b, "pasted line %03d\n", i)
	}
	buf := filepath.Join(tm.dir, "paste.txt")
	must(t, os.WriteFile(buf, []byte(strings.TrimSuffix(b.String(), "\n")), 0o644))
	tm.tmux("load-buffer", "-b", "p", buf)
	tm.tmux("paste-buffer", "-p", "-b", "p", "-t", "main")
	tm.waitFor("[pasted 500 lines]")
	if scr := tm.screen(); strings.Contains(scr, "working") || strings.Contains(scr, "pasted line 002") {
		t.Fatalf("the paste was sent or shown whole:\n%s", scr)
	}
	tm.keys("Enter")
	out := tm.waitFor("Got it.")
	if !strings.Contains(out, "… 497 more lines") {
		t.Errorf("the sent prompt is not shown folded:\n%s", out)
	}
	// What the agent stored is the whole paste.
	tm.idle()
	tm.keys("C-d")
	tm.waitFor("EXIT=0")
	show := runCorvid(t, s, "sessions", "list")
	id := firstSessionID(t, show)
	transcript := runCorvid(t, s, "sessions", "export", id)
	for _, want := range []string{"pasted line 001", "pasted line 250", "pasted line 500"} {
		if !strings.Contains(transcript, want) {
			t.Errorf("the stored prompt lacks %q", want)
		}
	}
}

// /model opens a picker from the session's config options and sets one.
func TestModelPicker(t *testing.T) {
	s := newSession(t)
	model := s.script("hello.json", `{"responses": [{"parts": [{"type": "text", "text": "ok"}]}]}`)
	tm := s.open(80, 24, nil, "tui", "-m", model)
	tm.ready()
	tm.typeText("/model")
	tm.keys("Enter")
	p := tm.waitFor("Esc closes")
	if !strings.Contains(p, "Model") || !strings.Contains(p, "› 1 "+model) {
		t.Errorf("the picker does not offer the model:\n%s", p)
	}
	tm.keys("Enter")
	out := tm.waitFor("model → " + model)
	if strings.Contains(out, "✗") {
		t.Errorf("setting the model failed:\n%s", out)
	}
}

// When the agent dies mid-turn, the TUI says so, restores the terminal
// (the cursor shown again) and exits 0.
func TestAgentKilledMidTurn(t *testing.T) {
	s := newSession(t)
	model := s.script("slow.json", `{"chunkSize": 1, "delayMs": 30, "responses": [
	  {"parts": [{"type": "text", "text": "A slow answer that is still streaming when its agent is killed."}]}]}`)
	tm := s.open(80, 24, nil, "tui", "-m", model)
	tm.ready()
	var pane int
	fmt.Sscan(tm.tmux("display-message", "-p", "-t", "main", "#{pane_pid}"), &pane)
	// The pane runs sh, whose child is corvid-tui (corvid execs it), whose
	// child is the agent, corvid acp.
	var agent []int
	for _, ui := range childrenOf(t, pane) {
		agent = append(agent, childrenOf(t, ui)...)
	}
	if len(agent) != 1 {
		t.Fatalf("found agent processes %v under the pane's shell %d", agent, pane)
	}
	tm.typeText("go slowly")
	tm.keys("Enter")
	tm.waitFor("A slow")
	if !strings.Contains(tm.screen(), "working") {
		t.Fatalf("the turn is not running:\n%s", tm.screen())
	}
	p, err := os.FindProcess(agent[0])
	must(t, err)
	must(t, p.Kill())
	out := tm.waitFor("EXIT=0")
	if !strings.Contains(out, "the agent exited") {
		t.Errorf("the agent's death is not told:\n%s", out)
	}
	if strings.Contains(out, "still streaming when its agent is killed.") {
		t.Errorf("the answer ended: the agent was not killed mid-turn:\n%s", out)
	}
	if c := strings.TrimSpace(tm.tmux("display-message", "-p", "-t", "main", "#{cursor_flag}")); c != "1" {
		t.Errorf("the cursor is still hidden after the TUI exited (cursor_flag %s)", c)
	}
}

// Shift+Tab moves to the next of the session's modes.
func TestShiftTabCyclesModes(t *testing.T) {
	s := newSession(t)
	tm := s.open(80, 24, nil, "tui", "-m", s.script("edit.json", editScript))
	tm.ready()
	tm.waitFor("mode Default")
	tm.keys("BTab")
	tm.waitUntil("the mode to change", func(string) bool { return strings.Contains(tm.screen(), "mode Edit") })
}

// Typing / lists the TUI's commands and the agent's (available_commands_update).
func TestSlashCompletesCommands(t *testing.T) {
	s := newSession(t)
	tm := s.open(80, 30, nil, "tui", "-m", s.script("edit.json", editScript))
	tm.ready()
	tm.typeText("/c")
	tm.waitFor("/compact")
	tm.keys("Tab")
	tm.waitUntil("the completion", func(string) bool { return strings.Contains(tm.screen(), "› /compact") })
}

// corvid tui -- CMD drives another ACP agent on its stdio (here corvid
// itself, started by hand, as any agent would be).
func TestDrivesAnyAgentCommand(t *testing.T) {
	s := newSession(t)
	model := s.script("hello.json", `{"responses": [{"parts": [{"type": "text", "text": "Answered over stdio."}]}]}`)
	tm := s.open(80, 24, nil, "tui", "--", filepath.Join(s.bins, "corvid"), "acp", "-m", model)
	tm.ready()
	tm.typeText("hello")
	tm.keys("Enter")
	tm.waitFor("Answered over stdio.")
}

// A new user with no key is told how to log in, or to try the scripted
// model.
func TestNoKeyTellsHowToLogIn(t *testing.T) {
	s := newSession(t)
	tm := s.open(80, 30, nil) // bare corvid, no -m, no credentials
	out := tm.waitFor("(Ctrl+D quits)")
	for _, want := range []string{"needs a login", "corvid auth login", "script:examples/hello.json"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("the pane lacks %q:\n%s", want, out)
		}
	}
	tm.keys("C-d")
	tm.waitFor("EXIT=0")
}

// Ctrl+S lists this directory's sessions; picking one loads it with its
// transcript.
func TestSessionsPickerLoadsOne(t *testing.T) {
	s := newSession(t)
	model := s.script("hello.json", `{"responses": [{"parts": [{"type": "text", "text": "Noted."}]}], "onExhausted": "repeat-last"}`)
	tm := s.open(80, 30, nil, "tui", "-m", model)
	tm.ready()
	tm.typeText("the first session's prompt")
	tm.keys("Enter")
	tm.waitFor("Noted.")
	tm.idle()
	tm.typeText("/new")
	tm.keys("Enter")
	tm.waitFor("── new session ──")
	tm.ready()
	tm.keys("C-s")
	p := tm.waitFor("Sessions (newest first)")
	if !strings.Contains(p, "the first session's prompt") {
		t.Fatalf("the picker does not list the first session:\n%s", p)
	}
	var pick string
	for _, l := range strings.Split(p, "\n") {
		if f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(l), "›")); len(f) > 1 && strings.Contains(l, "the first session's prompt") {
			pick = f[0]
		}
	}
	tm.keys(pick)
	out := tm.waitFor("loaded ──")
	if strings.Count(out, "› the first session's prompt") != 2 {
		t.Errorf("the loaded transcript does not show the prompt again:\n%s", out)
	}
}

// @ opens a fuzzy finder over the workspace's files without what
// .gitignore ignores; the pick is sent as a resource link.
func TestAtFinderSendsAResourceLink(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	s := newSession(t)
	model := s.script("hello.json", `{"responses": [{"parts": [{"type": "text", "text": "Seen."}]}]}`)
	must(t, os.MkdirAll(filepath.Join(s.dir, "src", "deep"), 0o755))
	must(t, os.WriteFile(filepath.Join(s.dir, "src", "deep", "widget.go"), []byte("package deep\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(s.dir, "widget_secret.go"), []byte("package x\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(s.dir, ".gitignore"), []byte("widget_secret.go\n"), 0o644))
	git := exec.Command("git", "init", "-q")
	git.Dir = s.dir
	must(t, git.Run())
	tm := s.open(80, 24, nil, "tui", "-m", model)
	tm.ready()
	tm.typeText("look at @widg")
	tm.waitFor("@src/deep/widget.go")
	if strings.Contains(tm.screen(), "widget_secret") {
		t.Errorf("the finder offers an ignored file:\n%s", tm.screen())
	}
	tm.keys("Tab")
	tm.waitUntil("the pick in the input", func(string) bool { return strings.Contains(tm.screen(), "› look at @src/deep/widget.go") })
	tm.keys("Enter")
	tm.waitFor("Seen.")
	tm.idle()
	tm.keys("C-d")
	tm.waitFor("EXIT=0")
	id := firstSessionID(t, runCorvid(t, s, "sessions", "list"))
	stored := runCorvid(t, s, "sessions", "export", "--format", "jsonl", id)
	if !strings.Contains(stored, "resource_link") || !strings.Contains(stored, "src/deep/widget.go") {
		t.Errorf("the prompt was not stored with a resource link to the file:\n%s", stored)
	}
}

// Ctrl+J and Alt+Enter insert a new line; Enter sends both lines as one
// prompt.
func TestNewlineKeys(t *testing.T) {
	s := newSession(t)
	tm := s.open(80, 24, nil, "tui", "-m", s.script("hello.json", `{"responses": [{"parts": [{"type": "text", "text": "Both lines."}]}]}`))
	tm.ready()
	tm.typeText("line one")
	tm.keys("C-j")
	tm.typeText("line two")
	tm.keys("M-Enter")
	tm.typeText("line three")
	if scr := tm.screen(); strings.Contains(scr, "working") {
		t.Fatalf("a newline key sent the prompt:\n%s", scr)
	}
	tm.keys("Enter")
	out := tm.waitFor("Both lines.")
	if !strings.Contains(out, "› line one\n  line two\n  line three") {
		t.Errorf("the prompt was not sent as three lines:\n%s", out)
	}
}

// The agent runs without the terminal: what it starts cannot open
// /dev/tty and draw over the UI or read the user's keys.
func TestAgentHasNoTerminal(t *testing.T) {
	s := newSession(t)
	model := s.script("hello.json", `{"responses": [{"parts": [{"type": "text", "text": "No terminal here."}]}]}`)
	probe := `if (: </dev/tty) 2>/dev/null; then echo "the agent could open /dev/tty" >&2; exit 3; fi; exec "$0" acp -m "$1"`
	tm := s.open(80, 24, nil, "tui", "--", "sh", "-c", probe, filepath.Join(s.bins, "corvid"), model)
	tm.ready()
	tm.typeText("hello")
	tm.keys("Enter")
	tm.waitFor("No terminal here.")
}
