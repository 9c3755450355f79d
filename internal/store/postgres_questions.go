package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Shared questions (docs/serve.md, "Questions across daemons"). A turn's
// permission question, on a PostgreSQL store, is also a row of the
// questions table, so that a client of another daemon that holds the
// session can answer it:
//
//   - the asking daemon inserts the row (AskQuestion) and notifies
//     corvid_questions;
//   - a daemon watching the session (WatchQuestions) reads the open
//     questions of other daemons' turns (OpenQuestions) and puts them to
//     its own clients;
//   - every answer, from any daemon and the asker's own clients alike, is
//     the conditional update AnswerQuestion: it sets the answer only
//     where none is set yet, so exactly one wins, and says whether it
//     did (the losers read the winner's with QuestionAnswer);
//   - the asker, once it has the answer, deletes the row (DropQuestion),
//     which tells the other daemons to withdraw their requests.
//
// A question is open only while its turn holds the session's lease: the
// row of a daemon that died is not shown to anyone, and goes with the
// next question of the session. The body and the answer are opaque here.

// Question is a shared question as OpenQuestions reads it.
type Question struct {
	ID        string
	SessionID string
	Body      []byte
}

// AskQuestion records an open question of session sid's running turn,
// asked by this Store, and tells the other Stores. It returns the
// question's id. On SQLite it records nothing: id "".
func (s *Store) AskQuestion(ctx context.Context, sid string, body []byte) (string, error) {
	if !s.pg {
		return "", nil
	}
	id := "q_" + randomHex(12)
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		// Questions of turns that are gone (a daemon died while it
		// asked) go with the session's next one.
		if _, err := tx.ExecContext(ctx, `DELETE FROM questions q WHERE q.session_id = ? AND NOT EXISTS
	(SELECT 1 FROM leases l WHERE l.session_id = q.session_id AND l.holder = q.holder)`, sid); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO questions (id, session_id, holder, body, asked_at) VALUES (?, ?, ?, ?, ?)`,
			id, sid, s.lease.holder, body, s.now().UnixNano()); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, pgQueryNotifyQuestion, s.notifyPayload(sid, 1))
		return err
	})
	if err != nil {
		return "", fmt.Errorf("record the question of session %s: %w", sid, err)
	}
	return id, nil
}

const pgQueryNotifyQuestion = `SELECT pg_notify('corvid_questions', ?)`

// AnswerQuestion answers question id with answer, unless it was answered
// already: won reports whether this answer is the one. An unknown id (the
// asker dropped it) is not won either.
func (s *Store) AnswerQuestion(ctx context.Context, id, answer string) (won bool, err error) {
	if !s.pg {
		return false, nil
	}
	err = s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var sid string
		err := tx.QueryRowContext(ctx, `UPDATE questions SET answer = ?, answered_by = ?, answered_at = ?
WHERE id = ? AND answer IS NULL RETURNING session_id`, answer, s.lease.holder, s.now().UnixNano(), id).Scan(&sid)
		if errors.Is(err, sql.ErrNoRows) {
			won = false
			return nil
		}
		if err != nil {
			return err
		}
		won = true
		_, err = tx.ExecContext(ctx, pgQueryNotifyQuestion, s.notifyPayload(sid, 1))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("answer question %s: %w", id, err)
	}
	return won, nil
}

// QuestionAnswer reads question id's answer: ok is false while it has
// none (or the question is gone).
func (s *Store) QuestionAnswer(ctx context.Context, id string) (answer string, ok bool, err error) {
	if !s.pg {
		return "", false, nil
	}
	var a sql.NullString
	err = s.readDB.QueryRowContext(ctx, `SELECT answer FROM questions WHERE id = ?`, id).Scan(&a)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read question %s: %w", id, err)
	}
	return a.String, a.Valid, nil
}

// DropQuestion deletes question id (its turn has its answer, or stopped
// waiting) and tells the other Stores, which withdraw it.
func (s *Store) DropQuestion(ctx context.Context, id string) error {
	if !s.pg || id == "" {
		return nil
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		var sid string
		err := tx.QueryRowContext(ctx, `DELETE FROM questions WHERE id = ? RETURNING session_id`, id).Scan(&sid)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, pgQueryNotifyQuestion, s.notifyPayload(sid, 1))
		return err
	})
	if err != nil {
		return fmt.Errorf("drop question %s: %w", id, err)
	}
	return nil
}

// OpenQuestions are the unanswered questions of session sid that other
// Stores' running turns ask now (their turn still holds the session's
// lease), oldest first.
func (s *Store) OpenQuestions(ctx context.Context, sid string) ([]Question, error) {
	if !s.pg {
		return nil, nil
	}
	stale := s.now().Add(-s.lease.ttl).UnixNano()
	rows, err := s.readDB.QueryContext(ctx, `SELECT q.id, q.body FROM questions q
JOIN leases l ON l.session_id = q.session_id AND l.holder = q.holder AND l.heartbeat >= ?
WHERE q.session_id = ? AND q.answer IS NULL AND q.holder <> ? ORDER BY q.asked_at, q.id`, stale, sid, s.lease.holder)
	if err != nil {
		return nil, fmt.Errorf("read the questions of session %s: %w", sid, err)
	}
	defer rows.Close()
	var out []Question
	for rows.Next() {
		q := Question{SessionID: sid}
		if err := rows.Scan(&q.ID, &q.Body); err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	return out, rows.Err()
}

// WatchQuestions calls fn when another Store asks, answers or drops a
// question of session sid (and, as Watch, with nothing known when
// notifications may have been missed): the caller reads what changed.
// On SQLite it does nothing.
func (s *Store) WatchQuestions(sid string, fn func()) (stop func()) {
	return s.watchOn(questionChannel, sid, func(int64) { fn() })
}
