package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/respond"
)

func TestRespondListsShowsAndAnswersAPendingQuestion(t *testing.T) {
	env := config.MapEnv{"CORVID_HOME": t.TempDir()}
	b, err := respond.Listen(respondPlace(env), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	asked := time.Now().Add(-90 * time.Second)
	result := make(chan respond.Answer, 1)
	go func() {
		a, _ := b.Ask(context.Background(), respond.Question{
			ID: "q7k2", SessionID: "sess-1", Title: "Run shell:\nrm -rf build", Detail: "rm -rf build", Cwd: "/src/app", Asked: asked,
		}, 0)
		result <- a
	}()
	for deadline := time.Now().Add(5 * time.Second); len(b.Pending()) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("question never became pending")
		}
	}
	now := asked.Add(90 * time.Second)
	run := func(c respondCmd) (string, error) {
		var out, errOut bytes.Buffer
		err := runRespond(env, c, now, &out, &errOut)
		if errOut.Len() > 0 {
			t.Errorf("stderr: %s", errOut.String())
		}
		return out.String(), err
	}

	table, err := run(respondCmd{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ID", "AGE", "q7k2", "1m30s", "sess-1", "Run shell: rm -rf build", "/src/app"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}

	js, err := run(respondCmd{JSON: true})
	if err != nil {
		t.Fatal(err)
	}
	var listed []respond.Question
	if err := json.Unmarshal([]byte(js), &listed); err != nil || len(listed) != 1 || listed[0].ID != "q7k2" || listed[0].Cwd != "/src/app" {
		t.Fatalf("--json = %s (%v)", js, err)
	}

	shown, err := run(respondCmd{ID: "q7k2"})
	if err != nil || !strings.Contains(shown, "rm -rf build") || !strings.Contains(shown, "corvid respond q7k2 allow") {
		t.Fatalf("show = %q, %v", shown, err)
	}

	if _, err := run(respondCmd{ID: "q7k2", Answer: "maybe"}); !errors.Is(err, respond.ErrBadAnswer) {
		t.Fatalf("bad answer = %v, want ErrBadAnswer", err)
	}
	if _, err := run(respondCmd{ID: "qzzz", Answer: "allow"}); !errors.Is(err, respond.ErrUnknownQuestion) {
		t.Fatalf("unknown id = %v, want ErrUnknownQuestion", err)
	}

	said, err := run(respondCmd{ID: "q7k2", Answer: "always"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(said, "q7k2: allowed for the rest of the session") {
		t.Errorf("answer printed %q", said)
	}
	select {
	case a := <-result:
		if a != respond.Always {
			t.Errorf("Ask got %q, want always", a)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Ask did not return after the answer")
	}

	empty, err := run(respondCmd{})
	if err != nil || !strings.Contains(empty, "No permission questions") {
		t.Errorf("empty list = %q, %v", empty, err)
	}
	emptyJSON, err := run(respondCmd{JSON: true})
	if err != nil || strings.TrimSpace(emptyJSON) != "[]" {
		t.Errorf("empty --json = %q, %v", emptyJSON, err)
	}
}

func TestRespondParsesIDAnswerAndJSONFlag(t *testing.T) {
	var cli struct {
		Respond respondCmd `cmd:""`
	}
	parser, err := kong.New(&cli, kong.Name("corvid"), kong.Exit(func(int) { t.Fatal("kong exited") }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.Parse([]string{"respond", "q7k2", "deny", "--json"}); err != nil {
		t.Fatal(err)
	}
	if got := cli.Respond; got.ID != "q7k2" || got.Answer != "deny" || !got.JSON {
		t.Errorf("parsed %+v", got)
	}
}
