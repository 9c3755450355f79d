package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// parseNotify takes what notifyPayload writes, and nothing else.
func TestParseNotify(t *testing.T) {
	s := &Store{lease: leaseState{holder: "42-abcd"}}
	o, seq, sid, ok := parseNotify(s.notifyPayload("sess_1", 17))
	if !ok || o != "42-abcd" || seq != 17 || sid != "sess_1" {
		t.Fatalf("parseNotify(own payload) = %q %d %q %v", o, seq, sid, ok)
	}
	for _, bad := range []string{"", "x", "x 1", "x  s", " 1 s", "x 0 s", "x -1 s", "x 1.5 s", "x 99999999999999999999 s",
		"x 1 two words", "x 1 " + strings.Repeat("s", 300), "x 1 s\n"} {
		if _, _, _, ok := parseNotify(bad); ok {
			t.Errorf("parseNotify(%q) accepted it", bad)
		}
	}
}

// Two Stores on one database: the watcher of one is told of the other's
// commits (with their last seq), not of its own, and reads exactly the
// new events after what it has, from the seq and the base it kept.
func TestWatchSeesAnotherStoresCommits(t *testing.T) {
	url := pgDatabase(t)
	a, b := openStore(t, url), openStore(t, url)
	ctx := context.Background()
	mustCreate(t, a, Session{ID: "s1", Cwd: "/w"})
	var mu sync.Mutex
	var seqs []int64
	got := make(chan int64, 100)
	stop := b.Watch("s1", func(seq int64) {
		mu.Lock()
		seqs = append(seqs, seq)
		mu.Unlock()
		got <- seq
	})
	defer stop()
	waitFirstCatchUp(t, b, got)
	// b's own rows call nothing.
	if err := b.Append("s1", "chunk", []byte(`{"n":0,"text":"own"}`)); err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case seq := <-got:
		t.Fatalf("watch called (seq %d) for the watching Store's own commit", seq)
	case <-time.After(300 * time.Millisecond):
	}
	// a's rows: similar payloads, so most are stored as deltas.
	for i := 1; i <= 5; i++ {
		if err := a.Append("s1", "chunk", fmt.Appendf(nil, `{"n":%d,"text":"streamed text of a, %d"}`, i, i)); err != nil {
			t.Fatal(err)
		}
		if err := a.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var last int64
	for last < 6 {
		select {
		case last = <-got:
		case <-time.After(10 * time.Second):
			t.Fatalf("watch not called for a's commits; seqs %v", seqs)
		}
	}
	// Read in two steps, keeping the base, as a follower does.
	var read []string
	collect := func(ev Event) error { read = append(read, fmt.Sprintf("%d:%s", ev.Seq, ev.Payload)); return nil }
	base, err := b.EventsAfter(ctx, "s1", 0, 3, nil, collect)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.EventsAfter(ctx, "s1", 3, 0, base, collect); err != nil {
		t.Fatal(err)
	}
	all := mustEvents(t, b, "s1")
	var want []string
	for _, ev := range all {
		want = append(want, fmt.Sprintf("%d:%s", ev.Seq, ev.Payload))
	}
	if strings.Join(read, "\n") != strings.Join(want, "\n") {
		t.Fatalf("EventsAfter in two steps read\n%s\nwant\n%s", strings.Join(read, "\n"), strings.Join(want, "\n"))
	}
	// Without the base, the read still gives the same rows.
	read = nil
	if _, err := b.EventsAfter(ctx, "s1", 3, 0, nil, collect); err != nil {
		t.Fatal(err)
	}
	if strings.Join(read, "\n") != strings.Join(want[3:], "\n") {
		t.Fatalf("EventsAfter(3) without a base read\n%s\nwant\n%s", strings.Join(read, "\n"), strings.Join(want[3:], "\n"))
	}
}

// Malformed notifications on corvid's channel are counted and ignored;
// the watcher goes on hearing real commits.
func TestMalformedNotificationIsIgnored(t *testing.T) {
	url := pgDatabase(t)
	a, b := openStore(t, url), openStore(t, url)
	ctx := context.Background()
	mustCreate(t, a, Session{ID: "s1", Cwd: "/w"})
	got := make(chan int64, 100)
	stop := b.Watch("s1", func(seq int64) { got <- seq })
	defer stop()
	waitFirstCatchUp(t, b, got)
	for _, p := range []string{"garbage", "x -1 s1", "x 1", ""} {
		if _, err := a.writeDB.Exec(`SELECT pg_notify('corvid_events', $1)`, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Append("s1", "chunk", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case seq := <-got:
		if seq != 1 {
			t.Fatalf("watch called with seq %d, want 1", seq)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch not called after the malformed notifications")
	}
	if n := b.MalformedNotifications(); n != 4 {
		t.Errorf("MalformedNotifications = %d, want 4", n)
	}
}

// On SQLite, Watch does nothing and nothing notifies.
func TestWatchOnSQLiteDoesNothing(t *testing.T) {
	s := openStore(t, t.TempDir()+"/s.db")
	if s.Notifies() {
		t.Fatal("a SQLite store says it notifies")
	}
	s.Watch("s1", func(int64) { t.Error("called") })()
}

// A shared question: another Store sees it open while the asker's turn
// holds the lease; of answers sent at once from several Stores exactly
// one wins, and every loser reads the winner's answer.
func TestSharedQuestionFirstAnswerWins(t *testing.T) {
	url := pgDatabase(t)
	a := openStore(t, url)
	ctx := context.Background()
	mustCreate(t, a, Session{ID: "s1", Cwd: "/w"})
	release, _, err := a.AcquireTurn(ctx, "s1", "turn")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := a.Append("s1", "chunk", []byte(`{}`)); err != nil { // the turn's first commit writes the lease
		t.Fatal(err)
	}
	if err := a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	id, err := a.AskQuestion(ctx, "s1", []byte(`{"call":{"id":"c1"}}`))
	if err != nil || id == "" {
		t.Fatalf("AskQuestion = %q, %v", id, err)
	}
	others := make([]*Store, 4)
	for i := range others {
		others[i] = openStore(t, url)
	}
	open, err := others[0].OpenQuestions(ctx, "s1")
	if err != nil || len(open) != 1 || open[0].ID != id || string(open[0].Body) != `{"call":{"id":"c1"}}` {
		t.Fatalf("OpenQuestions on another Store = %+v, %v", open, err)
	}
	if mine, _ := a.OpenQuestions(ctx, "s1"); len(mine) != 0 {
		t.Fatalf("the asker's own question is open to it: %+v", mine)
	}
	var wg sync.WaitGroup
	won := make([]bool, len(others))
	for i, s := range others {
		wg.Go(func() {
			w, err := s.AnswerQuestion(ctx, id, fmt.Sprint("answer-", i))
			if err != nil {
				t.Error(err)
			}
			won[i] = w
		})
	}
	wg.Wait()
	winners := 0
	winner := ""
	for i, w := range won {
		if w {
			winners++
			winner = fmt.Sprint("answer-", i)
		}
	}
	if winners != 1 {
		t.Fatalf("%d answers won, want exactly 1", winners)
	}
	if ans, ok, err := a.QuestionAnswer(ctx, id); err != nil || !ok || ans != winner {
		t.Fatalf("QuestionAnswer = %q %v %v, want the winner's %q", ans, ok, err, winner)
	}
	if w, _ := a.AnswerQuestion(ctx, id, "late"); w {
		t.Fatal("an answer after the first won too")
	}
	if open, _ := others[0].OpenQuestions(ctx, "s1"); len(open) != 0 {
		t.Fatalf("an answered question is still open: %+v", open)
	}
	if err := a.DropQuestion(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.QuestionAnswer(ctx, id); ok {
		t.Fatal("a dropped question still has an answer")
	}
	// A question whose turn let go of the lease is open to nobody.
	id2, _ := a.AskQuestion(ctx, "s1", []byte(`{}`))
	release()
	if open, _ := others[0].OpenQuestions(ctx, "s1"); len(open) != 0 {
		t.Fatalf("question %s of a turn that ended is open: %+v", id2, open)
	}
}

// waitFirstCatchUp waits for the call every watcher gets once its Store's
// first listening connection listens: a catch-up (seq 0), for what was
// committed before.
func waitFirstCatchUp(t *testing.T, s *Store, got <-chan int64) {
	t.Helper()
	select {
	case seq := <-got:
		if seq != 0 {
			t.Fatalf("a watch's first call had seq %d, want the catch-up (0) once its connection listens", seq)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("a watch was not called to catch up once its connection listened (listening %v)", s.Listening())
	}
}
