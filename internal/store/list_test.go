package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestListPagesByCwdWhileOthersWrite(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s := newStore(t)
		ctx := context.Background()
		base := time.Now().Add(-time.Hour)
		const n = 120
		want := map[string]bool{}
		for i := range n {
			id := fmt.Sprintf("a%03d", i)
			want[id] = true
			// Every fourth session shares its timestamp with the previous one,
			// so the id tie-break is exercised across page boundaries.
			mustCreate(t, s, Session{ID: id, Cwd: "/work/a", CreatedAt: base.Add(time.Duration(i-i%4/3) * time.Second)})
		}
		for i := range 30 {
			mustCreate(t, s, Session{ID: fmt.Sprintf("b%03d", i), Cwd: "/work/b", CreatedAt: base.Add(time.Duration(i) * time.Second)})
		}

		// While the client pages through /work/a: events stream into /work/b,
		// new /work/a sessions appear, and /work/a sessions already listed are
		// updated (so they jump ahead of the walk).
		listed := make(chan string, n)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case id := <-listed:
					s.Append(id, "chunk", []byte(`{}`))
				default:
				}
				s.Append(fmt.Sprintf("b%03d", i%30), "chunk", []byte(`{}`))
				if i%10 == 0 {
					if err := s.CreateSession(ctx, Session{ID: fmt.Sprintf("new%04d", i), Cwd: "/work/a"}); err != nil {
						t.Error(err)
					}
				}
				time.Sleep(200 * time.Microsecond)
			}
		})

		seen := map[string]int{}
		cur := ""
		pages := 0
		for {
			page, next, err := s.List(ctx, ListOptions{Cwd: "/work/a/", Cursor: cur, Limit: 7})
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for i, sess := range page {
				if sess.Cwd != "/work/a" {
					t.Errorf("cwd filter let %s (%s) through", sess.ID, sess.Cwd)
				}
				seen[sess.ID]++
				if want[sess.ID] {
					listed <- sess.ID
				}
				if i > 0 {
					prev := page[i-1]
					if prev.UpdatedAt.Before(sess.UpdatedAt) || prev.UpdatedAt.Equal(sess.UpdatedAt) && prev.ID < sess.ID {
						t.Errorf("page out of order: %s then %s", prev.ID, sess.ID)
					}
				}
			}
			if next == "" {
				break
			}
			cur = next
			time.Sleep(time.Millisecond) // let the writers move things around
		}
		close(stop)
		wg.Wait()

		for id, k := range seen {
			if k > 1 {
				t.Errorf("%s listed %d times", id, k)
			}
		}
		for id := range want {
			if seen[id] != 1 {
				t.Errorf("%s missing from the walk", id)
			}
		}
		if pages < n/7 {
			t.Errorf("only %d pages", pages)
		}
	})
}

func TestListDefaultsAndCapsPageSize(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s := newStore(t)
		ctx := context.Background()
		for i := range DefaultListLimit + 5 {
			mustCreate(t, s, Session{ID: fmt.Sprint(i), Cwd: "/w"})
		}
		page, next, err := s.List(ctx, ListOptions{})
		if err != nil || len(page) != DefaultListLimit || next == "" {
			t.Fatalf("default page: %d sessions, next %q, %v", len(page), next, err)
		}
		page, next, err = s.List(ctx, ListOptions{Cursor: next, Limit: 1 << 20})
		if err != nil || len(page) != 5 || next != "" {
			t.Fatalf("last page: %d sessions, next %q, %v", len(page), next, err)
		}
		page, _, err = s.List(ctx, ListOptions{Cwd: "/elsewhere"})
		if err != nil || len(page) != 0 {
			t.Errorf("unknown cwd: %d sessions, %v", len(page), err)
		}
	})
}

func TestListRejectsBadCursor(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s := newStore(t)
		for _, c := range []string{
			"not base64!",
			base64.RawURLEncoding.EncodeToString([]byte(`garbage`)),
			base64.RawURLEncoding.EncodeToString([]byte(`{"u":1}`)),
			base64.RawURLEncoding.EncodeToString([]byte(`{"u":1,"i":"x","z":2}`)),
			base64.RawURLEncoding.EncodeToString([]byte(`{"u":1,"i":"x"}{}`)),
		} {
			if _, _, err := s.List(context.Background(), ListOptions{Cursor: c}); !errors.Is(err, ErrBadCursor) {
				t.Errorf("List(cursor %q) = %v, want ErrBadCursor", c, err)
			}
		}
	})
}
