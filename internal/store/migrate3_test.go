package store

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/store/retype"
)

// Migration 3 gives every row of a schema-2 database the typed form
// retype.Row gives it, and the rows still read back whole where a changed
// row was the base of the next one's delta.
func TestMigration3RetypesRowsAndKeepsDeltaChains(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	s := openStore(t, path)
	ctx := t.Context()
	if err := s.CreateSession(ctx, Session{ID: "s1", Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	old := `{"codebuddy.ai/codeMode":"all","codebuddy.ai/mainAgent":"ptc","owner":"conn_1"}`
	if err := s.CreateSession(ctx, Session{ID: "s2", Cwd: "/w", Config: []byte(old)}); err != nil {
		t.Fatal(err)
	}
	member := `"meta":{"codebuddy.ai/memberEvent":"a","corvid.dev/subagent":{"depth":1,"id":"sub_1","name":"a","parentToolCallId":"t1"}}`
	var rows [][2]string
	rows = append(rows, [2]string{"agent_message_chunk", `{"kind":"agent_message_chunk","messageId":"m0","content":{"type":"text","text":"root"}}`})
	for i := range 5 { // deltas against each other, each changed
		rows = append(rows, [2]string{"agent_message_chunk", fmt.Sprintf(`{"kind":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"%d"},%s}`, i, member)})
	}
	rows = append(rows,
		[2]string{"agent_message_chunk", `{"kind":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"after"}}`},
		[2]string{"session_info_update", `{"kind":"session_info_update","meta":{"codebuddy.ai/teamUpdate":{"teamName":"t","type":"team_created"}}}`},
		[2]string{"context", `{"role":"user","parts":[{"type":"text","text":"go"}]}`},
	)
	for _, r := range rows {
		for _, sid := range []string{"s1", "s2"} {
			if err := s.Append(sid, r[0], []byte(r[1])); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.writeDB.ExecContext(ctx, `UPDATE schema_version SET version = 2`); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path)
	if v, err := schemaVersion(ctx, s.writeDB); err != nil || v != len(migrations) {
		t.Fatalf("schema version %d, %v; want %d", v, err, len(migrations))
	}
	for _, sid := range []string{"s1", "s2"} {
		evs := mustEvents(t, s, sid)
		if len(evs) != len(rows) {
			t.Fatalf("%s: %d rows, want %d", sid, len(evs), len(rows))
		}
		for i, r := range rows {
			kind, payload, _ := retype.Row(r[0], []byte(r[1]))
			if evs[i].Kind != kind || string(evs[i].Payload) != string(payload) {
				t.Errorf("%s row %d = %s %s, want %s %s", sid, i, evs[i].Kind, evs[i].Payload, kind, payload)
			}
			if strings.Contains(string(evs[i].Payload), "codebuddy.ai") {
				t.Errorf("%s row %d keeps a host key: %s", sid, i, evs[i].Payload)
			}
		}
	}
	if ss, err := s.GetSession(ctx, "s2"); err != nil || string(ss.Config) != `{"codeMode":"all","mainAgent":"ptc","owner":"conn_1"}` {
		t.Errorf("migrated settings %s, %v; want the codeMode keys renamed", ss.Config, err)
	}
	// Appending after the migration deltas against a migrated row.
	next := `{"kind":"agent_message_chunk","messageId":"m9","content":{"type":"text","text":"new"}}`
	if err := s.Append("s1", "agent_message_chunk", []byte(next)); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if evs := mustEvents(t, s, "s1"); string(evs[len(evs)-1].Payload) != next {
		t.Errorf("appended after the migration: %s", evs[len(evs)-1].Payload)
	}
}
