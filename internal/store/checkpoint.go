package store

import (
	"database/sql"
	"sync"
	"sync/atomic"
	"time"
)

// Checkpoints run beside the commits, not in them. In WAL mode SQLite
// copies the log back into the database file (a checkpoint) by itself in
// the commit that leaves the log over 1,000 pages: that commit, and every
// frame of a streamed answer waiting for it, then waited while 4 MB were
// read, written and synced (issue 36: 17 % of the agent's CPU while it
// streamed a 10 MB answer, in stretches of tens of ms with no frame
// written). The write connection now checkpoints by itself only past
// walBackstop pages (a bound should this goroutine not keep up), and the
// writer asks the checkpointer, a goroutine on a connection of the read
// pool, for a PASSIVE checkpoint once its commits wrote about checkpointEvery
// pages. A passive checkpoint waits for no reader and no writer: commits
// go on meanwhile.
//
// The checkpointer then waits for a pause in the commits (checkpointIdle
// without one) before it runs, unless the log already holds
// checkpointBusy pages: while an answer streams the commits come every
// few ms, and a checkpoint beside them took the CPU the stream needed
// (issue 36: a quarter of the store's CPU during a 10 MB answer); after
// the answer it costs no frame anything. What a commit survives is
// unchanged (a kill -9 loses no committed row: the log is in the file; a
// power cut, as before, the commits since the last checkpoint's sync, now
// up to checkpointIdle after a stream's end or checkpointBusy pages).
const (
	checkpointEvery = 1000                  // pages, SQLite's default automatic checkpoint
	checkpointBusy  = 8192                  // pages: checkpoint even while commits go on
	checkpointIdle  = 50 * time.Millisecond // a pause in the commits
	walBackstop     = 16384                 // pages: 64 MiB of log at 4 KiB a page
)

// checkpointer runs the store's checkpoints; started by the first call
// for one.
type checkpointer struct {
	// db is the store's read pool: a checkpoint writes no row, and a
	// connection of its own would keep its file open until every
	// connection to the file closed (SQLite holds a closed connection's
	// descriptor while the process has locks on the file).
	db    *sql.DB
	pages int // written since the last call; owned by the writer (commitMu)

	// idle and busy are checkpointIdle and checkpointBusy (tests shorten
	// them before the first commit).
	idle time.Duration
	busy int64

	epoch time.Time    // lastCommit counts from it (monotonic)
	last  atomic.Int64 // when the last commit ended, since epoch
	owed  atomic.Int64 // pages committed since the last checkpoint began

	mu      sync.Mutex
	started bool
	closed  bool
	kick    chan struct{}
	done    chan struct{}
}

func (c *checkpointer) init(db *sql.DB) {
	c.db, c.idle, c.busy, c.epoch = db, checkpointIdle, checkpointBusy, time.Now()
}

// wrote counts pages a commit wrote to the log and asks for a checkpoint
// once they add up to checkpointEvery. The caller holds commitMu.
func (c *checkpointer) wrote(pages int) {
	if c.db == nil {
		return // PostgreSQL
	}
	c.last.Store(int64(time.Since(c.epoch)))
	c.owed.Add(int64(pages))
	c.pages += pages
	if c.pages < checkpointEvery {
		return
	}
	c.pages = 0
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if !c.started {
		c.started = true
		c.kick, c.done = make(chan struct{}, 1), make(chan struct{})
		go c.run()
	}
	signal(c.kick)
}

// commitPages estimates the log pages a commit of rows (n sessions, bytes
// of stored payload) writes: each session's row and the events' leaf and
// parent pages, and the payload, mostly in overflow pages of 4 KiB.
func commitPages(sessions, bytes int) int { return 3*sessions + bytes/4000 + 1 }

func (c *checkpointer) run() {
	defer close(c.done)
	for range c.kick {
		if !c.awaitPause() {
			return
		}
		c.owed.Store(0)
		var busy, log, done int64
		// An error (a checkpoint of another process runs) leaves the log
		// to the next call or the backstop.
		_ = c.db.QueryRow(`PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &done)
	}
}

// awaitPause waits until no commit ended for c.idle, or the log holds
// c.busy pages not yet checkpointed; false once the checkpointer closes.
func (c *checkpointer) awaitPause() bool {
	for c.owed.Load() < c.busy {
		wait := c.idle - (time.Since(c.epoch) - time.Duration(c.last.Load()))
		if wait <= 0 {
			return true
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case _, ok := <-c.kick: // more pages: look at owed again
			t.Stop()
			if !ok {
				return false
			}
		}
	}
	return true
}

// close stops the checkpointer, before the connections close (SQLite
// checkpoints the whole log when the last connection to the file closes).
func (c *checkpointer) close() {
	c.mu.Lock()
	c.closed = true
	started := c.started
	c.mu.Unlock()
	if started {
		close(c.kick)
		<-c.done
	}
}
