package store

import (
	"database/sql"
	"sync"
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
// go on meanwhile. What a commit survives is unchanged (a kill -9 loses no
// committed row: the log is in the file; a power cut, as before, the
// commits since the last checkpoint's sync).
const (
	checkpointEvery = 1000  // pages, SQLite's default automatic checkpoint
	walBackstop     = 16384 // pages: 64 MiB of log at 4 KiB a page
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

	mu      sync.Mutex
	started bool
	closed  bool
	kick    chan struct{}
	done    chan struct{}
}

// wrote counts pages a commit wrote to the log and asks for a checkpoint
// once they add up to checkpointEvery. The caller holds commitMu.
func (c *checkpointer) wrote(pages int) {
	if c.db == nil {
		return // PostgreSQL
	}
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
		var busy, log, done int64
		// An error (a checkpoint of another process runs) leaves the log
		// to the next call or the backstop.
		_ = c.db.QueryRow(`PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &done)
	}
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
