package reaper

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

var adoptOnce sync.Once

// Adopt makes this process the child subreaper of its descendants and
// reaps the orphans it adopts, for the rest of the process's life. It
// fails, changing nothing, where Go's os/exec cannot wait through pidfds
// (the reaper could not tell its children from adopted ones).
func Adopt(logger *slog.Logger) error {
	var err error
	adoptOnce.Do(func() { err = adopt(logger) })
	return err
}

func adopt(logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := pidfdsWork(); err != nil {
		return fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("%w: prctl(PR_SET_CHILD_SUBREAPER): %v", ErrUnsupported, err)
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGCHLD)
	go func() {
		for range ch {
			if n := reapAdopted(); n > 0 {
				logger.Debug("reaped adopted processes", "count", n)
			}
		}
	}()
	return nil
}

// pidfdsWork checks what Go's os package checks before it waits for its
// children through pidfds (os/pidfd_linux.go checkPidfd): pidfd_open,
// waitid(P_PIDFD) and pidfd_send_signal.
func pidfdsWork() error {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return fmt.Errorf("pidfd_open: %w", err)
	}
	defer unix.Close(fd)
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG, nil); err != unix.ECHILD {
		return fmt.Errorf("waitid(P_PIDFD): %v", err)
	}
	if err := unix.PidfdSendSignal(fd, 0, nil, 0); err != nil {
		return fmt.Errorf("pidfd_send_signal: %w", err)
	}
	return nil
}

// reapAdopted reaps every child that has exited and that no pidfd of ours
// refers to, and returns how many it reaped.
func reapAdopted() int {
	// Most SIGCHLDs are os/exec's children, which their Cmd.Wait has
	// reaped by now: one waitid that leaves the zombie in place (WNOWAIT)
	// says whether any child is waiting to be reaped at all.
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil); err != nil || info.Signo == 0 {
		return 0
	}
	var zombies []int
	for _, pid := range children() {
		if state(pid) == 'Z' {
			zombies = append(zombies, pid)
		}
	}
	if len(zombies) == 0 {
		return 0
	}
	waited := pidfdTargets()
	n := 0
	for _, pid := range zombies {
		if waited[pid] {
			continue // os/exec's: its Cmd.Wait reaps it
		}
		var ws unix.WaitStatus
		if got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); err == nil && got == pid {
			n++
		}
	}
	return n
}

// children lists this process's children, from every thread's
// /proc/self/task/TID/children (a child belongs to the thread that forked
// it, or to any thread when adopted).
func children() []int {
	files, _ := filepath.Glob("/proc/self/task/*/children")
	var pids []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, field := range bytes.Fields(b) {
			if pid, err := strconv.Atoi(string(field)); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// state is the state letter of pid in /proc/PID/stat (0 if unreadable).
func state(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}

// pidfdTargets is the set of pids that this process holds pidfds for
// ("Pid:" in /proc/self/fdinfo/FD exists only for a pidfd).
func pidfdTargets() map[int]bool {
	set := map[int]bool{}
	entries, err := os.ReadDir("/proc/self/fdinfo")
	if err != nil {
		return set
	}
	for _, e := range entries {
		b, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue
		}
		for line := range bytes.Lines(b) {
			if v, ok := bytes.CutPrefix(line, []byte("Pid:")); ok {
				if pid, err := strconv.Atoi(string(bytes.TrimSpace(v))); err == nil && pid > 0 {
					set[pid] = true
				}
			}
		}
	}
	return set
}
