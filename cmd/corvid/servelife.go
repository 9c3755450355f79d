package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/corvid-agent/corvid/internal/acpserver"
)

// The daemon's life (docs/serve.md, "Signals"). SIGTERM or SIGINT drains:
// the listeners close, new prompts are refused, the running turns may end
// by themselves for --drain-timeout, then they are interrupted (a note
// says so in the session, stored, and the turn is cancelled, which stores
// what it showed) and the daemon exits 0. A second SIGTERM or SIGINT
// during the drain interrupts at once. SIGHUP reloads the configuration
// (reload.go).

// interruptedNote is what a turn the drain cut short shows and stores.
const interruptedNote = "\n\n[corvid] This turn was interrupted: corvid serve stopped before it finished."

// cancelledWait bounds how long the drain waits, after interrupting, for
// the cancelled turns to answer their prompts before connections close.
const cancelledWait = 5 * time.Second

// lifecycle watches the daemon's signals. Accepting ends when ctx ends;
// drain (Options.Drain of the transports) then lets the turns end.
type lifecycle struct {
	log     *slog.Logger
	hub     *acpserver.Hub
	timeout time.Duration
	reload  func() // SIGHUP
	now     chan struct{}
	sigs    chan os.Signal
}

// watchServeSignals starts watching; the returned ctx ends at the first
// SIGTERM or SIGINT, and stop stops watching.
func watchServeSignals(l *lifecycle) (ctx context.Context, stop func()) {
	ctx, stopAccepting := context.WithCancel(context.Background())
	l.now = make(chan struct{})
	l.sigs = make(chan os.Signal, 4)
	signal.Notify(l.sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		draining := false
		for {
			var sig os.Signal
			select {
			case <-done:
				return
			case sig = <-l.sigs:
			}
			switch {
			case sig == syscall.SIGHUP:
				if l.reload != nil {
					l.reload()
				}
			case !draining:
				draining = true
				l.log.Info("signal received; draining: no new connections or prompts, running turns may finish",
					"signal", sig.String(), "drain_timeout", l.timeout.String())
				stopAccepting()
			default:
				l.log.Warn("second signal; interrupting the running turns now", "signal", sig.String())
				close(l.now)
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(l.sigs)
		close(done)
		stopAccepting()
	}
}

// drain runs once the listeners closed: it refuses new prompts, waits for
// the running turns until the timeout or a second signal, and interrupts
// the ones left.
func (l *lifecycle) drain() {
	l.hub.Drain()
	n := l.hub.Running()
	if n == 0 {
		return
	}
	l.log.Info("draining: waiting for running turns", "turns", n, "timeout", l.timeout.String())
	timeout := time.NewTimer(l.timeout)
	defer timeout.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	why := ""
	for why == "" && l.hub.Running() > 0 {
		select {
		case <-timeout.C:
			why = fmt.Sprintf("drain timeout (%s)", l.timeout)
		case <-l.now:
			why = "second signal"
		case <-tick.C:
		}
	}
	if why == "" {
		l.log.Info("drained: every running turn finished")
		return
	}
	n = l.hub.Interrupt(interruptedNote)
	l.log.Warn("interrupted the running turns; what they showed is stored", "turns", n, "why", why)
	// Let the cancelled turns store their end and answer their prompts
	// before the connections close.
	deadline := time.Now().Add(cancelledWait)
	for l.hub.Running() > 0 && time.Now().Before(deadline) {
		<-tick.C
	}
}
