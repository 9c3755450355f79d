package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// Page sizes for List.
const (
	DefaultListLimit = 50
	MaxListLimit     = 500
)

// ListOptions selects a page of sessions.
type ListOptions struct {
	Cwd    string // only sessions whose Cwd is exactly this absolute path; "" = all
	Cursor string // from a previous List; "" = first page
	Limit  int    // ≤ 0: DefaultListLimit; capped at MaxListLimit
}

// cursor is the keyset position after the last session of a page. It is
// sent to clients as opaque base64url JSON.
type cursor struct {
	UpdatedAt int64  `json:"u"`
	ID        string `json:"i"`
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return c, ErrBadCursor
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || c.ID == "" || dec.More() {
		return cursor{}, ErrBadCursor
	}
	return c, nil
}

// List returns sessions, most recently updated first (ties broken by id,
// descending), and a cursor for the next page ("" when this is the last).
//
// Pages are keyset pages on (updated_at, id), not offsets, so sessions
// created or updated while a client pages never shift the remaining pages:
// every session that is not modified during the walk is returned exactly
// once, and none is returned twice. A session modified during the walk moves
// ahead of the walk; if it had not been returned yet, the next walk from the
// first page shows it. An unparseable cursor yields [ErrBadCursor].
func (s *Store) List(ctx context.Context, opts ListOptions) ([]Session, string, error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultListLimit
	}
	limit = min(limit, MaxListLimit)

	var where []string
	var args []any
	if opts.Cwd != "" {
		where = append(where, "cwd = ?")
		args = append(args, cleanCwd(opts.Cwd))
	}
	if opts.Cursor != "" {
		c, err := decodeCursor(opts.Cursor)
		if err != nil {
			return nil, "", fmt.Errorf("list sessions: %w", err)
		}
		where = append(where, "(updated_at, id) < (?, ?)")
		args = append(args, c.UpdatedAt, c.ID)
	}
	q := `SELECT ` + sessionColumns + ` FROM sessions`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY updated_at DESC, id DESC LIMIT ?`
	args = append(args, limit+1)

	var out []Session
	err := retryBusy(ctx, func() error {
		out = out[:0]
		rows, err := s.readDB.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			sess, err := scanSession(rows)
			if err != nil {
				return err
			}
			out = append(out, sess)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, "", fmt.Errorf("list sessions: %w", err)
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		next = cursor{UpdatedAt: last.UpdatedAt.UnixNano(), ID: last.ID}.encode()
	}
	return out, next, nil
}
