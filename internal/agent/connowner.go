package agent

import (
	"context"
	"encoding/json"

	"github.com/corvid-agent/corvid/internal/store"
)

// Connection ownership (CodeBuddy's C56, docs/codebuddy.md): a stored
// session is owned by the connection that last created, loaded or resumed
// it, recorded with its settings; writes that must come from the owner
// (the multitask option) ask OwnedBy first. The rule is the session's, not
// a connection's: another connection is either another client of the same
// `corvid serve` (which shares this Session: acpserver's hub) or another
// corvid process on the same store, and both find the owner here. A
// session kept only in memory is never shared (serve always stores), so
// always owned.

// storedOwner is the owner recorded in a stored settings blob ("": none).
func storedOwner(cfg json.RawMessage) string {
	var sc storedControls
	if len(cfg) == 0 || json.Unmarshal(cfg, &sc) != nil {
		return ""
	}
	return sc.Owner
}

// Claim records conn as the session's owner.
func (s *Session) Claim(ctx context.Context, conn string) error {
	st := s.settings.store
	if st == nil {
		return nil
	}
	err := st.UpdateSession(ctx, s.ID, func(ss *store.Session) {
		m := map[string]json.RawMessage{}
		if len(ss.Config) > 0 && json.Unmarshal(ss.Config, &m) != nil {
			m = map[string]json.RawMessage{}
		}
		m["owner"], _ = json.Marshal(conn)
		ss.Config, _ = json.Marshal(m)
	})
	if err != nil {
		return storeFailure("record the session's owner", err)
	}
	return nil
}

// OwnedBy reports whether conn owns the session; a session with no owner
// recorded is claimed by conn.
func (s *Session) OwnedBy(ctx context.Context, conn string) (bool, error) {
	st := s.settings.store
	if st == nil {
		return true, nil
	}
	meta, err := st.GetSession(ctx, s.ID)
	if err != nil {
		return false, storeFailure("read the session's owner", err)
	}
	switch storedOwner(meta.Config) {
	case conn:
		return true, nil
	case "":
		return true, s.Claim(ctx, conn)
	}
	return false, nil
}

// TakeOver makes conn the owner of a session it loads or resumes when
// another connection owns it (one with no owner is left for the first
// owner-checked write to claim, so a plain load writes nothing).
func (s *Session) TakeOver(ctx context.Context, conn string) error {
	st := s.settings.store
	if st == nil {
		return nil
	}
	meta, err := st.GetSession(ctx, s.ID)
	if err != nil {
		return storeFailure("read the session's owner", err)
	}
	if o := storedOwner(meta.Config); o == "" || o == conn {
		return nil
	}
	return s.Claim(ctx, conn)
}
