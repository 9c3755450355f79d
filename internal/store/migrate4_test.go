package store

import (
	"path/filepath"
	"strings"
	"testing"
)

// A database at schema version 3, the release before answers were stored
// once, opens at version 4 with every row read back as it was; one at a
// version above this corvid's is refused with the upgrade named, which is
// what a release of version 3 now says of a version-4 database instead of
// reading a long answer's context record as an empty text.
func TestStoreAtVersion3OpensAndReadsAsBefore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	s := openStore(t, path)
	ctx := t.Context()
	if err := s.CreateSession(ctx, Session{ID: "s1", Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	rows := [][2]string{
		{"agent_message_chunk", `{"kind":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"an answer"}}`},
		{"context_text", `{"role":"model","text":"an answer"}`},
	}
	for _, r := range rows {
		if err := s.Append("s1", r[0], []byte(r[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	before := mustEvents(t, s, "s1")
	if _, err := s.writeDB.ExecContext(ctx, `UPDATE schema_version SET version = 3`); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openStore(t, path)
	if v, err := schemaVersion(ctx, s.writeDB); err != nil || v != 4 || len(migrations) != 4 {
		t.Fatalf("schema version %d, %v; want 4 of %d", v, err, len(migrations))
	}
	after := mustEvents(t, s, "s1")
	if len(after) != len(before) {
		t.Fatalf("%d rows after, %d before", len(after), len(before))
	}
	for i := range before {
		if after[i].Kind != before[i].Kind || string(after[i].Payload) != string(before[i].Payload) {
			t.Errorf("row %d = %s %s, was %s %s", i, after[i].Kind, after[i].Payload, before[i].Kind, before[i].Payload)
		}
	}

	if _, err := s.writeDB.ExecContext(ctx, `UPDATE schema_version SET version = 5`); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s2, err := Open(path); err == nil {
		s2.Close()
		t.Fatal("a database of a newer schema opened")
	} else if !strings.Contains(err.Error(), "newer than this corvid understands (4); upgrade corvid") {
		t.Errorf("refusal: %v", err)
	}
}
