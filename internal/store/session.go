package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// Session is a session's metadata. Config is opaque JSON owned by the agent.
type Session struct {
	ID             string
	Cwd            string // absolute working directory
	AdditionalDirs []string
	Title          string
	Model          string
	Mode           string
	Config         json.RawMessage
	ParentID       string // the session this one was forked from, if any
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

const sessionColumns = `id, cwd, additional_dirs, title, model, mode, config, parent_id, created_at, updated_at`

type rowScanner interface{ Scan(dest ...any) error }

func scanSession(r rowScanner) (Session, error) {
	var (
		s              Session
		dirs           string
		config         []byte
		created, updat int64
	)
	if err := r.Scan(&s.ID, &s.Cwd, &dirs, &s.Title, &s.Model, &s.Mode, &config, &s.ParentID, &created, &updat); err != nil {
		return Session{}, err
	}
	if dirs != "" && dirs != "[]" {
		if err := json.Unmarshal([]byte(dirs), &s.AdditionalDirs); err != nil {
			return Session{}, fmt.Errorf("session %s: additional_dirs: %w", s.ID, err)
		}
	}
	if len(config) > 0 {
		s.Config = json.RawMessage(config)
	}
	s.CreatedAt = time.Unix(0, created)
	s.UpdatedAt = time.Unix(0, updat)
	return s, nil
}

// sessionArgs returns the values for sessionColumns, in order.
func sessionArgs(s *Session) ([]any, error) {
	dirs := []byte("[]")
	if len(s.AdditionalDirs) > 0 {
		var err error
		if dirs, err = json.Marshal(s.AdditionalDirs); err != nil {
			return nil, err
		}
	}
	var config []byte
	if len(s.Config) > 0 {
		if !json.Valid(s.Config) {
			return nil, fmt.Errorf("session %s: config is not valid JSON", s.ID)
		}
		config = s.Config
	}
	return []any{s.ID, s.Cwd, string(dirs), s.Title, s.Model, s.Mode, config, s.ParentID,
		s.CreatedAt.UnixNano(), s.UpdatedAt.UnixNano()}, nil
}

func cleanCwd(cwd string) string {
	if cwd == "" {
		return ""
	}
	return filepath.Clean(cwd)
}

// CreateSession stores a new session. ID must be set; a zero CreatedAt
// becomes now and a zero UpdatedAt becomes CreatedAt. An existing ID yields
// [ErrExists].
func (s *Store) CreateSession(ctx context.Context, sess Session) error {
	if sess.ID == "" {
		return errors.New("create session: empty id")
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		return insertSession(ctx, tx, s.now(), sess)
	})
	if err != nil {
		return fmt.Errorf("create session %s: %w", sess.ID, err)
	}
	s.deleted.forget(sess.ID)
	return nil
}

func insertSession(ctx context.Context, tx *sql.Tx, now time.Time, sess Session) error {
	sess.Cwd = cleanCwd(sess.Cwd)
	if sess.CreatedAt.IsZero() {
		sess.CreatedAt = now
	}
	if sess.UpdatedAt.IsZero() {
		sess.UpdatedAt = sess.CreatedAt
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE id = ?`, sess.ID).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return ErrExists
	}
	args, err := sessionArgs(&sess)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO sessions (`+sessionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	return err
}

// GetSession returns a session's metadata, or an error wrapping [ErrNotFound].
func (s *Store) GetSession(ctx context.Context, id string) (Session, error) {
	var sess Session
	err := retryBusy(ctx, func() error {
		var err error
		sess, err = scanSession(s.readDB.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = ?`, id))
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return Session{}, fmt.Errorf("get session %s: %w", id, err)
	}
	return sess, nil
}

// UpdateSession reads a session, lets fn change it, and writes it back, all
// in one write transaction, so concurrent updates (from any process) never
// lose each other's changes. fn cannot change ID or CreatedAt; UpdatedAt is
// set to now (never moving backwards). fn may run more than once if the
// transaction has to be retried, and must not call the Store (it holds the
// write connection).
func (s *Store) UpdateSession(ctx context.Context, id string, fn func(*Session)) error {
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		old, err := scanSession(tx.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = ?`+s.forUpdate(), id))
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		sess := old
		sess.AdditionalDirs = append([]string(nil), old.AdditionalDirs...)
		sess.Config = append(json.RawMessage(nil), old.Config...)
		fn(&sess)
		sess.ID, sess.CreatedAt = old.ID, old.CreatedAt
		sess.Cwd = cleanCwd(sess.Cwd)
		sess.UpdatedAt = s.now()
		if !sess.UpdatedAt.After(old.UpdatedAt) {
			sess.UpdatedAt = old.UpdatedAt.Add(time.Nanosecond)
		}
		args, err := sessionArgs(&sess)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET cwd = ?, additional_dirs = ?, title = ?, model = ?, mode = ?,
	config = ?, parent_id = ?, updated_at = ? WHERE id = ?`,
			args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[9], id)
		return err
	})
	if err != nil {
		return fmt.Errorf("update session %s: %w", id, err)
	}
	return nil
}

// Delete removes a session and its events. Events of it still queued in
// this Store are committed first (and so deleted too). An unknown id is not
// an error. Sessions forked from it keep their copy and their ParentID.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := s.flushSession(ctx, id); err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM events WHERE session_pk = (SELECT pk FROM sessions WHERE id = ?)`, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	return nil
}

// Fork creates dst as a copy of session srcID: dst gets all of src's events
// (same sequence numbers) and ParentID = srcID. Fields left zero in dst
// (Cwd, AdditionalDirs, Title, Model, Mode, Config) are taken from src.
// Events of src still queued in this Store are committed first. Unknown src
// yields [ErrNotFound]; an existing dst.ID yields [ErrExists].
func (s *Store) Fork(ctx context.Context, srcID string, dst Session) error {
	if dst.ID == "" {
		return fmt.Errorf("fork session %s: empty destination id", srcID)
	}
	if err := s.flushSession(ctx, srcID); err != nil {
		return fmt.Errorf("fork session %s: %w", srcID, err)
	}
	err := s.inWriteTx(ctx, func(tx *sql.Tx) error {
		src, err := scanSession(tx.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = ?`, srcID))
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		d := dst
		if d.Cwd == "" {
			d.Cwd = src.Cwd
		}
		if d.AdditionalDirs == nil {
			d.AdditionalDirs = src.AdditionalDirs
		}
		if d.Title == "" {
			d.Title = src.Title
		}
		if d.Model == "" {
			d.Model = src.Model
		}
		if d.Mode == "" {
			d.Mode = src.Mode
		}
		if d.Config == nil {
			d.Config = src.Config
		}
		d.ParentID = srcID
		if err := insertSession(ctx, tx, s.now(), d); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO events (session_pk, seq, kind, payload, time)
SELECT (SELECT pk FROM sessions WHERE id = ?), seq, kind, payload, time FROM events
WHERE session_pk = (SELECT pk FROM sessions WHERE id = ?) ORDER BY seq`, d.ID, srcID)
		return err
	})
	if err != nil {
		return fmt.Errorf("fork session %s into %s: %w", srcID, dst.ID, err)
	}
	return nil
}
