package main

import (
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"
)

// interruptWindow is how soon a second SIGINT must follow the first to mean
// "exit" rather than "cancel the running turns".
const interruptWindow = 2 * time.Second

// shutdownLimit is how long a shutdown a signal asked for may take before
// corvid gives up on it (stuckShutdown): an editor or Gas City that stops
// its agent must never be left with a corvid running on alone.
const shutdownLimit = 10 * time.Second

// watchSignals gives `corvid acp` its signal semantics. SIGINT cancels the
// running turns and the server keeps serving: Gas City's Interrupt sends
// SIGINT to the agent's process group and expects the agent to stay up
// (gastownhall/gascity internal/runtime/acp/acp.go, Provider.Interrupt:
// syscall.Kill(-pid, SIGINT)). A second SIGINT within interruptWindow (a
// person pressing Ctrl-C twice), or SIGTERM (Gas City's Stop), shuts down.
// When the process is still there limit after shutdown was called, stuck
// is called (stuckShutdown in corvid). The returned func stops watching.
func watchSignals(logger *slog.Logger, interrupt chan<- struct{}, shutdown func(), limit time.Duration, stuck func()) func() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	done := make(chan struct{})
	go func() {
		var last time.Time
		for {
			var sig os.Signal
			select {
			case <-done:
				return
			case sig = <-sigs:
			}
			now := time.Now()
			if sig == syscall.SIGINT && (last.IsZero() || now.Sub(last) > interruptWindow) {
				last = now
				logger.Info("interrupt: cancelling running turns; interrupt again within 2s, or send SIGTERM, to exit")
				select {
				case interrupt <- struct{}{}:
				default: // one already pending does the same
				}
				continue
			}
			logger.Info("signal received; shutting down", "signal", sig.String())
			shutdown()
			select {
			case <-done: // the shutdown ended (the process exits) or watching stopped
			case <-time.After(limit):
				stuck()
			}
			return
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}

// stuckShutdown logs every goroutine's stack, to say where the shutdown
// hangs, and exits 1.
func stuckShutdown(logger *slog.Logger) {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	logger.Error("shutdown not done after "+shutdownLimit.String()+"; exiting", "goroutines", string(buf))
	os.Exit(1)
}

// survivePipes keeps a closed stderr (or log pipe) from killing corvid.
// Go's runtime dies of SIGPIPE when a write to fd 1 or 2 fails with EPIPE
// unless the program asks for the signal; then the write returns EPIPE,
// which the logger drops. Notify (not Ignore) is used on purpose: an ignored
// signal stays ignored across exec, and shell children must keep the
// default SIGPIPE behaviour (`yes | head` must end).
func survivePipes() {
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	go func() {
		for range pipes {
		}
	}()
}
