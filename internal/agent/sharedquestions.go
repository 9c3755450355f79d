package agent

import (
	"context"
	"encoding/json"

	"github.com/corvid-agent/corvid/internal/tool"
)

// Questions across processes (docs/serve.md, "Questions across daemons").
// On a shared store (PostgreSQL) a permission question of a running turn
// is also a store row, so that a client of another daemon that holds the
// session can answer it; the first answer, from anywhere, wins (a
// conditional update in the store). These are the front end's handles on
// those rows; on SQLite they record and find nothing.

// SharedQuestion is a question another process's turn asks in this
// session: a permission (Call), or a single choice (Choice, set; ask_user
// or exit_plan through the permission prompt).
type SharedQuestion struct {
	ID     string
	Call   ToolCall
	Choice *tool.ChoiceQuestion
}

// sharedBody is a shared question's row: the call, with what the request
// shows of it that the stored tool call leaves out, or the choice.
type sharedBody struct {
	Call        ToolCall             `json:"call"`
	AlwaysLabel string               `json:"alwaysLabel,omitempty"`
	Member      *Member              `json:"member,omitempty"` // the sub-agent whose call it is
	Choice      *tool.ChoiceQuestion `json:"choice,omitempty"`
}

// sharedAnswer is a shared question's answer in its row: the answer (an
// option id, or a choice's id) and who gave it, so that the asker records
// the answering client's clientInfo (Answered) whichever process it is
// connected to.
type sharedAnswer struct {
	Answer string   `json:"answer"`
	By     Answerer `json:"by"`
}

// ShareQuestion records call as an open question of the session's running
// turn for the other processes on the store; "" when the store does not
// share questions.
func (s *Session) ShareQuestion(ctx context.Context, call ToolCall) (string, error) {
	st := s.conv.log.store
	if st == nil || !st.Notifies() {
		return "", nil
	}
	body, err := json.Marshal(sharedBody{Call: call, AlwaysLabel: call.AlwaysLabel, Member: call.Member})
	if err != nil {
		return "", err
	}
	return st.AskQuestion(ctx, s.ID, body)
}

// ShareChoice is ShareQuestion for a single-choice question (q.ToolCallID
// names its tool call).
func (s *Session) ShareChoice(ctx context.Context, q tool.ChoiceQuestion) (string, error) {
	st := s.conv.log.store
	if st == nil || !st.Notifies() {
		return "", nil
	}
	body, err := json.Marshal(sharedBody{Call: ToolCall{ID: q.ToolCallID, Title: q.Title}, Choice: &q})
	if err != nil {
		return "", err
	}
	return st.AskQuestion(ctx, s.ID, body)
}

// AnswerShared answers shared question id with answer (an option id, or
// a choice's id), given by by, unless another answer came first; won says
// whether this one counts.
func (s *Session) AnswerShared(ctx context.Context, id, answer string, by Answerer) (won bool, err error) {
	st := s.conv.log.store
	if st == nil {
		return false, nil
	}
	body, err := json.Marshal(sharedAnswer{Answer: answer, By: by})
	if err != nil {
		return false, err
	}
	return st.AnswerQuestion(ctx, id, string(body))
}

// SharedAnswer is shared question id's answer and who gave it, once it
// has one.
func (s *Session) SharedAnswer(ctx context.Context, id string) (answer string, by Answerer, ok bool, err error) {
	st := s.conv.log.store
	if st == nil {
		return "", Answerer{}, false, nil
	}
	raw, ok, err := st.QuestionAnswer(ctx, id)
	if err != nil || !ok {
		return "", Answerer{}, false, err
	}
	var a sharedAnswer
	if json.Unmarshal([]byte(raw), &a) != nil {
		return raw, Answerer{Name: "unknown"}, true, nil // a bare answer: nobody named
	}
	return a.Answer, a.By, true, nil
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
		b.Call.AlwaysLabel, b.Call.Member = b.AlwaysLabel, b.Member
		out = append(out, SharedQuestion{ID: q.ID, Call: b.Call, Choice: b.Choice})
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
