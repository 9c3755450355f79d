package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

//go:embed askuser.md
var askUserDescription string

// AskUser puts one to four questions to the user: a form (elicitation) when
// the client shows forms, one single-choice question as a permission prompt
// when it does not, and otherwise tells the model nobody can answer.
type AskUser struct{}

// Question is one question of ask_user (and of exit_plan's approval).
type Question struct {
	Header      string   `json:"header"`
	Question    string   `json:"question"`
	Options     []Option `json:"options,omitempty"`
	MultiSelect bool     `json:"multiSelect,omitempty"`
}

// Option is one choice of a Question.
type Option struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

type askUserInput struct {
	Questions []Question `json:"questions"`
}

const maxQuestions = 4

func (AskUser) Name() string        { return "ask_user" }
func (AskUser) Description() string { return askUserDescription }
func (AskUser) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"questions":{"type":"array","minItems":1,"maxItems":4,"description":"The questions, asked together","items":{"type":"object","properties":{` +
		`"header":{"type":"string","description":"A label of at most 12 characters, e.g. \"Database\""},` +
		`"question":{"type":"string","description":"The complete question, ending with a question mark"},` +
		`"options":{"type":"array","description":"2 to 6 choices; leave out for a free-text answer","items":{"type":"object","properties":{` +
		`"label":{"type":"string","description":"The choice, 1 to 5 words"},"description":{"type":"string","description":"What choosing it means"}},"required":["label"]}},` +
		`"multiSelect":{"type":"boolean","description":"true: the user may pick several options"}},` +
		`"required":["header","question"]}}},"required":["questions"]}`)
}

func (AskUser) Describe(env *Env, raw json.RawMessage) Preview {
	var in askUserInput
	looseDecode(raw, &in)
	title := "Ask the user"
	if len(in.Questions) == 1 && in.Questions[0].Header != "" {
		title = "Ask the user: " + shorten(in.Questions[0].Header, 40)
	} else if len(in.Questions) > 1 {
		title = fmt.Sprintf("Ask the user %d questions", len(in.Questions))
	}
	return Preview{Kind: KindOther, Title: title, Access: AccessNone,
		Content: []Content{{Type: ContentText, Text: QuestionsText(in.Questions)}}}
}

func (AskUser) Run(ctx context.Context, env *Env, call Call) (Result, error) {
	var in askUserInput
	if r := decodeInput("ask_user", call.Input, &in); r != nil {
		return *r, nil
	}
	if msg := checkQuestions(in.Questions); msg != "" {
		return ErrorResult(msg), nil
	}
	return Ask(ctx, env, AskRequest{CallID: call.ID, Title: "Ask the user", Questions: in.Questions})
}

// checkQuestions says what is wrong with qs, or "".
func checkQuestions(qs []Question) string {
	if len(qs) == 0 || len(qs) > maxQuestions {
		return fmt.Sprintf("ask_user takes 1 to %d questions, not %d", maxQuestions, len(qs))
	}
	for i, q := range qs {
		if strings.TrimSpace(q.Question) == "" {
			return fmt.Sprintf("question %d has no question text", i+1)
		}
		if len(q.Options) == 1 {
			return fmt.Sprintf("question %d has one option; give 2 or more, or none for a free-text answer", i+1)
		}
		seen := map[string]bool{}
		for _, o := range q.Options {
			if strings.TrimSpace(o.Label) == "" || seen[o.Label] {
				return fmt.Sprintf("question %d: every option needs a label of its own", i+1)
			}
			seen[o.Label] = true
		}
	}
	return ""
}

// QuestionsText is how questions read as text: in a tool call's content,
// in the question's stored record and in the permission fallback.
func QuestionsText(qs []Question) string {
	var b strings.Builder
	for i, q := range qs {
		if i > 0 {
			b.WriteString("\n")
		}
		if q.Header != "" {
			fmt.Fprintf(&b, "%s: ", q.Header)
		}
		b.WriteString(q.Question)
		b.WriteString("\n")
		for _, o := range q.Options {
			if o.Description != "" {
				fmt.Fprintf(&b, "  - %s — %s\n", o.Label, o.Description)
			} else {
				fmt.Fprintf(&b, "  - %s\n", o.Label)
			}
		}
	}
	return b.String()
}

// fieldName is the form field of question i.
func fieldName(i int) string { return fmt.Sprintf("q%d", i+1) }

// FormSchema is the elicitation requestedSchema for qs: a string with titled
// choices (oneOf) for a single choice, an array of titled choices (anyOf)
// for several, a plain string for free text; every question required.
func FormSchema(qs []Question) json.RawMessage {
	type enumOption struct {
		Const       string `json:"const"`
		Title       string `json:"title"`
		Description string `json:"description,omitempty"`
	}
	props := map[string]any{}
	var required []string
	for i, q := range qs {
		options := make([]enumOption, 0, len(q.Options))
		for _, o := range q.Options {
			options = append(options, enumOption{Const: o.Label, Title: o.Label, Description: o.Description})
		}
		p := map[string]any{"title": q.Header, "description": q.Question}
		if q.Header == "" {
			p["title"] = q.Question
		}
		switch {
		case len(options) == 0:
			p["type"] = "string"
		case q.MultiSelect:
			p["type"] = "array"
			p["items"] = map[string]any{"anyOf": options}
		default:
			p["type"] = "string"
			p["oneOf"] = options
		}
		props[fieldName(i)] = p
		required = append(required, fieldName(i))
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required})
	return b
}

// Answers are the user's answers to questions, by index; a nil entry was
// left unanswered.
type Answers [][]string

// AskRequest is what Ask and AskAnswers put to the user.
type AskRequest struct {
	CallID    string // the tool call that asks
	Title     string // the tool call's title (permission fallback)
	Message   string // what the form says above the questions; "": the question itself
	Questions []Question
}

// text is the request as text: the message, then the questions.
func (r AskRequest) text() string {
	if r.Message == "" {
		return QuestionsText(r.Questions)
	}
	return r.Message + "\n\n" + QuestionsText(r.Questions)
}

// Ask puts r's questions to the user through env.Ask and turns the outcome
// into the tool's result: the answers for the model and, as the call's
// content, the questions with their answers. A cancelled turn is ctx's
// error.
func Ask(ctx context.Context, env *Env, r AskRequest) (Result, error) {
	qs := r.Questions
	ans, outcome, err := AskAnswers(ctx, env, r)
	if err != nil {
		return Result{}, err
	}
	if ans == nil {
		return outcome, nil
	}
	var model, shown strings.Builder
	model.WriteString("The user answered:\n")
	for i, q := range qs {
		a := "(no answer)"
		if len(ans[i]) > 0 {
			a = strings.Join(ans[i], ", ")
		}
		fmt.Fprintf(&model, "- %s → %s\n", q.Question, a)
		fmt.Fprintf(&shown, "%s → %s\n", orText(q.Header, q.Question), a)
	}
	return Result{Output: model.String(), Content: []Content{{Type: ContentText, Text: r.text() + "\nAnswer:\n" + shown.String()}}}, nil
}

func orText(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// AskAnswers is Ask's question part: it returns the answers, or nil
// answers with the Result that says why there are none (declined,
// dismissed, nobody to ask, no answer in time).
func AskAnswers(ctx context.Context, env *Env, r AskRequest) (Answers, Result, error) {
	qs := r.Questions
	none := func(msg string, isErr bool) (Answers, Result, error) {
		return nil, Result{Output: msg, IsError: isErr, Content: []Content{{Type: ContentText, Text: r.text() + "\n" + msg}}}, nil
	}
	const cannot = "The user cannot be asked from here: this client shows no questions. Decide yourself and say what you assumed, or ask in your reply and end the turn."
	if env == nil || env.Ask == nil {
		return none(cannot, true)
	}
	form, _ := env.Ask.ElicitModes()
	if !form {
		if len(qs) != 1 || len(qs[0].Options) == 0 || qs[0].MultiSelect {
			return none("This client cannot show a form, only a single choice: ask one question with options (not multiSelect), or ask in your reply and end the turn.", true)
		}
		choices := make([]Choice, 0, len(qs[0].Options))
		for i, o := range qs[0].Options {
			choices = append(choices, Choice{ID: fmt.Sprintf("choice_%d", i+1), Label: o.Label})
		}
		picked, err := env.Ask.Choose(ctx, ChoiceQuestion{ToolCallID: r.CallID, Title: r.Title, Text: r.text(), Choices: choices})
		if fail, ok := askFailure(ctx, err); ok {
			return none(fail.Output, fail.IsError)
		} else if err != nil {
			return nil, Result{}, err
		}
		for i, c := range choices {
			if c.ID == picked {
				return Answers{{qs[0].Options[i].Label}}, Result{}, nil
			}
		}
		return none("The user dismissed the question without answering.", false)
	}
	msg := r.Message
	switch {
	case msg != "":
	case len(qs) == 1:
		msg = qs[0].Question
	default:
		msg = fmt.Sprintf("%d questions from the agent", len(qs))
	}
	res, err := env.Ask.Elicit(ctx, Elicitation{Mode: "form", Message: msg, Schema: FormSchema(qs), ToolCallID: r.CallID})
	if fail, ok := askFailure(ctx, err); ok {
		return none(fail.Output, fail.IsError)
	} else if err != nil {
		return nil, Result{}, err
	}
	switch res.Action {
	case "accept":
	case "decline":
		return none("The user declined to answer.", false)
	case "cancel":
		return none("The user dismissed the questions without answering.", false)
	default:
		return none(fmt.Sprintf("The client answered %q, which corvid does not know; treat the questions as unanswered.", res.Action), true)
	}
	ans := make(Answers, len(qs))
	for i := range qs {
		raw, ok := res.Content[fieldName(i)]
		if !ok {
			continue
		}
		var one string
		var many []string
		switch {
		case json.Unmarshal(raw, &one) == nil:
			if strings.TrimSpace(one) != "" {
				ans[i] = []string{one}
			}
		case json.Unmarshal(raw, &many) == nil:
			ans[i] = many
		default:
			ans[i] = []string{string(raw)}
		}
	}
	return ans, Result{}, nil
}

// askFailure turns an Asker error into a result for the model (ok), or
// leaves it for the caller: a cancelled turn (ctx's error).
func askFailure(ctx context.Context, err error) (Result, bool) {
	switch {
	case err == nil || ctx.Err() != nil:
		return Result{}, false
	case errors.Is(err, ErrCannotAsk):
		return ErrorResult("The user cannot be asked from here: this client shows no questions. Decide yourself and say what you assumed, or ask in your reply and end the turn."), true
	case errors.Is(err, ErrNoAnswer):
		return ErrorResult("The user did not answer in time; the question was withdrawn. Decide yourself and say what you assumed, or ask in your reply."), true
	}
	return ErrorResult(fmt.Sprintf("The question could not be shown: %v", err)), true
}
