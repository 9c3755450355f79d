package bench

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// Issue 30's measurements of `corvid serve` (docs/status.md has the
// figures; bench/README.md the commands). Each reports numbers; it fails
// only when the daemon answers wrongly.

// BenchmarkServeAttach: a session of 200 stored chunks that another
// connection holds live; a new connection's session/load attaches to it.
// Timed: session/load written → first replayed session/update read
// (ms-first-update) and → the load's answer (ms-load), medians and p90.
func BenchmarkServeAttach(b *testing.B) {
	bin := testkit.BuildCorvid(b)
	home := b.TempDir()
	d := startServe(b, bin, home, wordsScript(b, 200, 0), false)
	owner := sockPeer(b, d.sock)
	owner.initialize()
	sid := owner.newSession(home)
	owner.call("session/prompt", promptParams(sid))
	var firsts, loads []time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		p := sockPeer(b, d.sock)
		p.initialize()
		b.StartTimer()
		t0 := time.Now()
		var first time.Duration
		p.await(p.send("session/load", map[string]any{"sessionId": sid, "cwd": home, "mcpServers": []any{}}), func(f frame, at time.Time) {
			if first == 0 && f.Method == "session/update" {
				first = at.Sub(t0)
			}
		})
		whole := time.Since(t0)
		b.StopTimer()
		p.close()
		if first == 0 {
			b.Fatal("session/load replayed nothing")
		}
		firsts, loads = append(firsts, first), append(loads, whole)
	}
	slices.Sort(firsts)
	slices.Sort(loads)
	b.ReportMetric(msAt(firsts, 0.5), "ms-first-update")
	b.ReportMetric(msAt(firsts, 0.9), "p90-ms-first-update")
	b.ReportMetric(msAt(loads, 0.5), "ms-load")
}

// BenchmarkServeFanout50: 50 connections hold one session (one created
// it, 49 attached with session/load); each op is a turn of 100 chunks,
// 5 ms apart. For every chunk, each connection's arrival is compared with
// the first connection's to get it: fanout-us-p50/p99 over all 49 × 100
// arrivals, and spread-us-p50, the median over chunks of last − first.
// The first arrival stands for the emission, so this is what fanning out
// adds after the first socket write. Budget (issue 30): p50 ≤ 1 ms.
func BenchmarkServeFanout50(b *testing.B) {
	const holders, chunks = 50, 100
	bin := testkit.BuildCorvid(b)
	home := b.TempDir()
	d := startServe(b, bin, home, wordsScript(b, chunks, 5), false)
	peers := make([]*peer, holders)
	for i := range peers {
		peers[i] = sockPeer(b, d.sock)
		peers[i].initialize()
	}
	sid := peers[0].newSession(home)
	for _, p := range peers[1:] {
		p.load(sid, home)
	}
	var lat, spread []time.Duration
	b.ResetTimer()
	for range b.N {
		at := make([][]time.Time, holders)
		errs := make([]error, holders)
		id := peers[0].send("session/prompt", promptParams(sid))
		parallel(holders, func(i int) {
			at[i], errs[i] = arrivals(peers[i], sid, chunks, id, i == 0)
		})
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		for k := range chunks {
			first, last := at[0][k], at[0][k]
			for i := range holders {
				first, last = minTime(first, at[i][k]), maxTime(last, at[i][k])
			}
			for i := range holders {
				if d := at[i][k].Sub(first); d > 0 || i > 0 {
					lat = append(lat, d)
				}
			}
			spread = append(spread, last.Sub(first))
		}
	}
	slices.Sort(lat)
	slices.Sort(spread)
	b.ReportMetric(usAt(lat, 0.5), "fanout-us-p50")
	b.ReportMetric(usAt(lat, 0.99), "fanout-us-p99")
	b.ReportMetric(usAt(spread, 0.5), "spread-us-p50")
}

// arrivals reads one turn's message chunks of sid from p, in order, with
// when each arrived; it checks their text. The prompting connection
// (owner) reads on to the prompt's answer (id).
func arrivals(p *peer, sid string, chunks, id int, owner bool) ([]time.Time, error) {
	var at []time.Time
	var text strings.Builder
	for len(at) < chunks || owner {
		m, err := p.read()
		if err != nil {
			return nil, err
		}
		now := time.Now()
		var f frame
		if err := json.Unmarshal(m, &f); err != nil {
			return nil, err
		}
		if owner && f.Method == "" && f.ID != nil && *f.ID == id {
			break
		}
		if f.Method != "session/update" {
			continue
		}
		if f.Params.SessionID != sid {
			return nil, fmt.Errorf("an update of session %s on a connection of %s", f.Params.SessionID, sid)
		}
		if f.Params.Update.SessionUpdate == "agent_message_chunk" {
			at = append(at, now)
			text.WriteString(f.Params.Update.Content.Text)
		}
	}
	if want := wordsText(chunks); text.String() != want || len(at) != chunks {
		return nil, fmt.Errorf("got %d chunks %q; want %d chunks %q", len(at), text.String(), chunks, want)
	}
	return at, nil
}

// BenchmarkServeIdleWebSockets opens $CORVID_IDLE_WS (default 1000)
// WebSocket connections, each initialized and then idle, and reads the
// daemon's VmRSS before and after: KiB-per-conn is the growth per
// connection. Budget (issue 30): ≤ 64 KiB.
func BenchmarkServeIdleWebSockets(b *testing.B) {
	n := sizesFromEnv(b, "CORVID_IDLE_WS", []int{1000})[0]
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < uint64(n+200) {
		b.Skipf("ulimit -n is %d; %d connections need about %d descriptors in this process and in the daemon", lim.Cur, n, n+200)
	}
	bin := testkit.BuildCorvid(b)
	for range b.N {
		home := b.TempDir()
		d := startServe(b, bin, home, wordsScript(b, 1, 0), true)
		warm := wsPeer(b, d.url) // the code paths of a connection, paged in
		warm.initialize()
		warm.close()
		time.Sleep(500 * time.Millisecond)
		before := d.rss(b)
		peers := make([]*peer, n)
		for i := range peers {
			peers[i] = wsPeer(b, d.url)
			peers[i].initialize()
		}
		time.Sleep(time.Second)
		after := d.rss(b)
		b.ReportMetric(float64(after-before)/float64(n), "KiB-per-conn")
		b.ReportMetric(float64(before)/1024, "MiB-before")
		b.ReportMetric(float64(after)/1024, "MiB-after")
		for _, p := range peers {
			p.close()
		}
	}
}

// BenchmarkServe100Sessions2Clients: 100 sessions, each held by two
// clients, one on the socket and one on the WebSocket (alternating which
// created it); all 100 prompts go at once and each answer is 200 chunks,
// 2 ms apart. Every one of the 200 clients must get every chunk of its
// own session, in order, and nothing else. ns/op is the whole wave;
// updates/s counts the chunks delivered.
func BenchmarkServe100Sessions2Clients(b *testing.B) {
	const sessions, chunks = 100, 200
	bin := testkit.BuildCorvid(b)
	home := b.TempDir()
	d := startServe(b, bin, home, wordsScript(b, chunks, 2), true)
	type pair struct {
		sid         string
		owner, peer *peer
	}
	pairs := make([]pair, sessions)
	for i := range pairs {
		s, w := sockPeer(b, d.sock), wsPeer(b, d.url)
		if i%2 == 1 {
			s, w = w, s
		}
		s.initialize()
		w.initialize()
		sid := s.newSession(home)
		w.load(sid, home)
		pairs[i] = pair{sid, s, w}
	}
	var total time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		ids := make([]int, sessions)
		for i, p := range pairs {
			ids[i] = p.owner.send("session/prompt", promptParams(p.sid))
		}
		errs := make([]error, 2*sessions)
		parallel(2*sessions, func(i int) {
			p := pairs[i/2]
			c := p.owner
			if i%2 == 1 {
				c = p.peer
			}
			_, errs[i] = arrivals(c, p.sid, chunks, ids[i/2], i%2 == 0)
		})
		total += time.Since(t0)
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(2*sessions*chunks*b.N)/total.Seconds(), "updates/s")
}

// usAt is the q-quantile of sorted durations, in µs.
func usAt(sorted []time.Duration, q float64) float64 { return msAt(sorted, q) * 1000 }

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// BenchmarkServeStreamedTurn: one socket client, a turn of 20,000
// one-word chunks as fast as the scripted model makes them; updates/s is
// what the daemon delivers (compare BenchmarkStreamedTurn on stdio).
func BenchmarkServeStreamedTurn(b *testing.B) {
	const chunks = 20000
	bin := testkit.BuildCorvid(b)
	home := b.TempDir()
	d := startServe(b, bin, home, wordsScript(b, chunks, 0), false)
	p := sockPeer(b, d.sock)
	p.initialize()
	var total time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		sid := p.newSession(home)
		b.StartTimer()
		t0 := time.Now()
		id := p.send("session/prompt", promptParams(sid))
		at, err := arrivals(p, sid, chunks, id, true)
		total += time.Since(t0)
		if err != nil || len(at) != chunks {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(chunks*b.N)/total.Seconds(), "updates/s")
}
