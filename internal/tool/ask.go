package tool

import (
	"context"
	"encoding/json"
	"errors"
)

// Elicitation is a structured question for the user: a form built from a
// restricted JSON schema, or a URL to open (ACP and MCP elicitation/create).
type Elicitation struct {
	Mode    string // "form" or "url"
	Message string
	// Schema is the form's requestedSchema (form mode): an object of
	// primitive properties.
	Schema json.RawMessage
	// URL and ID are the address and its unique elicitation id (url mode).
	URL, ID string
	// ToolCallID scopes the question to a tool call ("" = the session).
	ToolCallID string
}

// ElicitResult is the user's answer.
type ElicitResult struct {
	// Action is "accept", "decline" or "cancel" (or a client's own).
	Action string
	// Content is the form's values on accept: field → string, number,
	// boolean or string array.
	Content map[string]json.RawMessage
}

// Choice is one option of a question asked through a permission request.
type Choice struct {
	ID, Label string
}

// ChoiceQuestion is a single-choice question asked through the client's
// permission prompt, for clients that show no forms.
type ChoiceQuestion struct {
	ToolCallID string
	Title      string // the tool call's title
	Text       string // the question, shown as the tool call's content
	Choices    []Choice
}

var (
	// ErrCannotAsk: the client can show no such question.
	ErrCannotAsk = errors.New("the client cannot show this question")
	// ErrNoAnswer: the user did not answer within the interaction timeout.
	ErrNoAnswer = errors.New("no answer in time")
)

// Asker puts questions to the user through the front end. It is optional:
// Env.Ask is nil when nobody can be asked (print mode). Cancelling ctx
// withdraws a question that is open.
type Asker interface {
	// ElicitModes reports which elicitation modes the client shows.
	ElicitModes() (form, url bool)
	// Elicit asks e; ErrCannotAsk if the client did not advertise its mode,
	// ErrNoAnswer after the interaction timeout, ctx's error on cancel.
	Elicit(ctx context.Context, e Elicitation) (ElicitResult, error)
	// CompleteElicitation tells the client that the out-of-band part of
	// url-mode elicitation id finished.
	CompleteElicitation(id string)
	// Choose asks q through the permission prompt and returns the chosen
	// Choice.ID, or "" when the user dismissed it; ErrCannotAsk when the
	// client cannot answer requests at all.
	Choose(ctx context.Context, q ChoiceQuestion) (string, error)
}
