package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/acpkit"
)

// fakeAsker shows forms (form) and answers with answer; it records what it
// was asked.
type fakeAsker struct {
	form     bool
	answer   ElicitResult
	err      error
	pick     string
	asked    []Elicitation
	choices  []ChoiceQuestion
	chooseEr error
}

func (f *fakeAsker) ElicitModes() (bool, bool) { return f.form, false }
func (f *fakeAsker) Elicit(_ context.Context, e Elicitation) (ElicitResult, error) {
	f.asked = append(f.asked, e)
	return f.answer, f.err
}
func (f *fakeAsker) CompleteElicitation(string) {}
func (f *fakeAsker) Choose(_ context.Context, q ChoiceQuestion) (string, error) {
	f.choices = append(f.choices, q)
	return f.pick, f.chooseEr
}

var sampleQuestions = []Question{
	{Header: "Database", Question: "Which database?", Options: []Option{{Label: "Postgres", Description: "Relational"}, {Label: "SQLite"}}},
	{Header: "Targets", Question: "Which platforms?", MultiSelect: true, Options: []Option{{Label: "linux"}, {Label: "macos"}}},
	{Question: "What is it called?"},
}

// The form corvid builds is an ElicitationSchema by the official ACP schema
// (and its properties are the restricted kinds the schema names, not the
// catch-all "other").
func TestFormSchemaIsAnACPElicitationSchema(t *testing.T) {
	raw := FormSchema(sampleQuestions)
	if err := acpkit.Validate("ElicitationSchema", raw); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	var s struct {
		Properties map[string]json.RawMessage
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	for name, def := range map[string]string{"q1": "StringPropertySchema", "q2": "MultiSelectPropertySchema", "q3": "StringPropertySchema"} {
		if err := acpkit.Validate(def, s.Properties[name]); err != nil {
			t.Errorf("%s is not a %s: %s: %v", name, def, s.Properties[name], err)
		}
	}
	// The validator can fail: a choice without its title is not an EnumOption.
	if err := acpkit.Validate("StringPropertySchema", json.RawMessage(`{"type":"string","oneOf":[{"const":"a"}]}`)); err == nil {
		t.Error("a oneOf entry without a title passed")
	}
}

func TestAskUserTurnsTheAnswersIntoTheResult(t *testing.T) {
	f := &fakeAsker{form: true, answer: ElicitResult{Action: "accept", Content: map[string]json.RawMessage{
		"q1": json.RawMessage(`"SQLite"`), "q2": json.RawMessage(`["linux","macos"]`)}}}
	in, _ := json.Marshal(askUserInput{Questions: sampleQuestions})
	res, err := AskUser{}.Run(context.Background(), &Env{Ask: f}, Call{ID: "call_1", Input: in})
	if err != nil || res.IsError {
		t.Fatalf("%+v %v", res, err)
	}
	if len(f.asked) != 1 || f.asked[0].ToolCallID != "call_1" || f.asked[0].Mode != "form" || f.asked[0].Message != "3 questions from the agent" {
		t.Errorf("asked %+v", f.asked)
	}
	for _, want := range []string{"Which database? → SQLite", "Which platforms? → linux, macos", "What is it called? → (no answer)"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output %q lacks %q", res.Output, want)
		}
	}
}

func TestAskUserOutcomesWithoutAnswers(t *testing.T) {
	one := []Question{sampleQuestions[0]}
	cases := []struct {
		name    string
		ask     *fakeAsker
		qs      []Question
		want    string
		isError bool
	}{
		{"decline", &fakeAsker{form: true, answer: ElicitResult{Action: "decline"}}, one, "declined", false},
		{"cancel", &fakeAsker{form: true, answer: ElicitResult{Action: "cancel"}}, one, "dismissed", false},
		{"unknown action", &fakeAsker{form: true, answer: ElicitResult{Action: "_later"}}, one, `"_later"`, true},
		{"timeout", &fakeAsker{form: true, err: ErrNoAnswer}, one, "did not answer in time", true},
		{"client error", &fakeAsker{form: true, err: errors.New("boom")}, one, "could not be shown", true},
		{"no form, several questions", &fakeAsker{}, sampleQuestions, "only a single choice", true},
		{"no form, dismissed choice", &fakeAsker{pick: ""}, one, "dismissed", false},
		{"no form, cannot answer", &fakeAsker{chooseEr: ErrCannotAsk}, one, "cannot be asked", true},
	}
	for _, c := range cases {
		res, err := Ask(context.Background(), &Env{Ask: c.ask}, AskRequest{CallID: "c", Questions: c.qs})
		if err != nil || res.IsError != c.isError || !strings.Contains(res.Output, c.want) {
			t.Errorf("%s: %+v %v; want %q (error %v)", c.name, res, err, c.want, c.isError)
		}
	}
	res, _ := Ask(context.Background(), &Env{}, AskRequest{Questions: one})
	if !res.IsError || !strings.Contains(res.Output, "cannot be asked") {
		t.Errorf("no asker: %+v", res)
	}
}

func TestAskUserCancelledTurnIsAGoError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := &fakeAsker{form: true, err: context.Canceled}
	if _, err := Ask(ctx, &Env{Ask: f}, AskRequest{Questions: sampleQuestions[:1]}); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
}

func TestAskUserRejectsBadQuestions(t *testing.T) {
	for _, qs := range [][]Question{
		nil,
		{{Question: " "}},
		{{Question: "a?", Options: []Option{{Label: "only"}}}},
		{{Question: "a?", Options: []Option{{Label: "x"}, {Label: "x"}}}},
		make([]Question, 5),
	} {
		in, _ := json.Marshal(askUserInput{Questions: qs})
		f := &fakeAsker{form: true}
		res, err := AskUser{}.Run(context.Background(), &Env{Ask: f}, Call{Input: in})
		if err != nil || !res.IsError || len(f.asked) != 0 {
			t.Errorf("%+v: %+v %v, asked %d", qs, res, err, len(f.asked))
		}
	}
}

// The schema, the input structs and the description name the same fields.
func TestAskUserSchemaStructAndDescriptionAgree(t *testing.T) {
	schema := string(AskUser{}.InputSchema())
	for _, f := range []string{"questions", "header", "question", "options", "label", "description", "multiSelect"} {
		if !strings.Contains(schema, `"`+f+`"`) {
			t.Errorf("the schema lacks %s", f)
		}
		if !strings.Contains(askUserDescription, "`"+f+"`") && f != "description" {
			t.Errorf("the description does not explain %s", f)
		}
	}
	var in askUserInput
	if err := json.Unmarshal([]byte(`{"questions":[{"header":"h","question":"q","options":[{"label":"l","description":"d"}],"multiSelect":true}]}`), &in); err != nil ||
		in.Questions[0].Options[0].Description != "d" || !in.Questions[0].MultiSelect {
		t.Errorf("the struct does not read the schema's fields: %+v %v", in, err)
	}
}
