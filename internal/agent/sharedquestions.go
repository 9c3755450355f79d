package agent

import (
	"context"
	"encoding/json"
)

// Questions across processes (docs/serve.md, "Questions across daemons").
// On a shared store (PostgreSQL) a permission question of a running turn
// is also a store row, so that a client of another daemon that holds the
// session can answer it; the first answer, from anywhere, wins (a
// conditional update in the store). These are the front end's handles on
// those rows; on SQLite they record and find nothing.

// SharedQuestion is a permission question another process's turn asks
// in this session.
type SharedQuestion struct {
	ID   string
	Call ToolCall
}

// sharedBody is a shared question's row: the call, with what the request
// shows of it that the stored tool call leaves out.
type sharedBody struct {
	Call        ToolCall       `json:"call"`
	AlwaysLabel string         `json:"alwaysLabel,omitempty"`
	Meta        map[string]any `json:"meta,omitempty"`
}

// ShareQuestion records call as an open question of the session's running
// turn for the other processes on the store; "" when the store does not
// share questions.
func (s *Session) ShareQuestion(ctx context.Context, call ToolCall) (string, error) {
	st := s.conv.log.store
	if st == nil || !st.Notifies() {
		return "", nil
	}
	body, err := json.Marshal(sharedBody{Call: call, AlwaysLabel: call.AlwaysLabel, Meta: call.Meta})
	if err != nil {
		return "", err
	}
	return st.AskQuestion(ctx, s.ID, body)
}

// AnswerShared answers shared question id with answer (an option id)
// unless another answer came first; won says whether this one counts.
func (s *Session) AnswerShared(ctx context.Context, id, answer string) (won bool, err error) {
	if st := s.conv.log.store; st != nil {
		return st.AnswerQuestion(ctx, id, answer)
	}
	return false, nil
}

// SharedAnswer is shared question id's answer, once it has one.
func (s *Session) SharedAnswer(ctx context.Context, id string) (answer string, ok bool, err error) {
	if st := s.conv.log.store; st != nil {
		return st.QuestionAnswer(ctx, id)
	}
	return "", false, nil
}

// DropShared deletes shared question id: the turn has its answer (or
// stopped waiting), and the other processes withdraw it.
func (s *Session) DropShared(ctx context.Context, id string) error {
	if st := s.conv.log.store; st != nil {
		return st.DropQuestion(ctx, id)
	}
	return nil
}

// OpenSharedQuestions are the questions other processes' running turns
// ask in this session now, unanswered.
func (s *Session) OpenSharedQuestions(ctx context.Context) ([]SharedQuestion, error) {
	st := s.conv.log.store
	if st == nil {
		return nil, nil
	}
	qs, err := st.OpenQuestions(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	out := make([]SharedQuestion, 0, len(qs))
	for _, q := range qs {
		var b sharedBody
		if json.Unmarshal(q.Body, &b) != nil || b.Call.ID == "" {
			continue
		}
		b.Call.AlwaysLabel, b.Call.Meta = b.AlwaysLabel, b.Meta
		out = append(out, SharedQuestion{ID: q.ID, Call: b.Call})
	}
	return out, nil
}

// WatchSharedQuestions calls fn when another process asks, answers or
// drops a question of this session (read them with OpenSharedQuestions
// and SharedAnswer); stop ends it. It does nothing on a store that does
// not share questions.
func (s *Session) WatchSharedQuestions(fn func()) (stop func()) {
	st := s.conv.log.store
	if st == nil {
		return func() {}
	}
	return st.WatchQuestions(s.ID, fn)
}

// SharesQuestions reports whether the session's store shares questions
// with other processes.
func (s *Session) SharesQuestions() bool {
	st := s.conv.log.store
	return st != nil && st.Notifies()
}
