package respond

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// dialTimeout bounds connecting to one corvid process.
const dialTimeout = 2 * time.Second

// List returns the pending questions of every live corvid process with a
// socket in p, oldest first. Sockets whose process is gone are removed on
// the way. A missing dir means no questions. When some live process could
// not be asked, the questions of the others are still returned, with an
// error saying which failed.
func List(p Place) ([]Question, error) {
	snaps, err := survey(p)
	var qs []Question
	for _, s := range snaps {
		qs = append(qs, s.resp.Questions...)
	}
	sortQuestions(qs)
	return qs, err
}

// Reply answers the pending question id in whichever corvid process holds
// it. It fails, changing nothing, when a is not allow, always or deny (or,
// for a choice question, not one of its choices: Question.ParseReply), when
// no process holds id (wrapping ErrUnknownQuestion, or saying what became
// of it when it was settled recently), or when two processes hold it.
func Reply(p Place, id string, a Answer) error {
	id = strings.TrimSpace(id)
	if id == "" {
		return errors.New("no question id given")
	}
	snaps, surveyErr := survey(p)
	var holders []string
	var held Question
	var became string
	for _, s := range snaps {
		for _, q := range s.resp.Questions {
			if q.ID == id {
				holders = append(holders, s.path)
				held = q
			}
		}
		if what, ok := s.resp.Settled[id]; ok {
			became = what
		}
	}
	switch len(holders) {
	case 0:
		if became != "" {
			return fmt.Errorf("question %s is no longer pending (%s)", id, became)
		}
		err := fmt.Errorf("%w %q (corvid respond lists the pending ones)", ErrUnknownQuestion, id)
		if surveyErr != nil {
			err = fmt.Errorf("%w; also: %w", err, surveyErr)
		}
		return err
	case 1:
		a, err := held.ParseReply(string(a))
		if err != nil {
			return err
		}
		if _, err := call(holders[0], request{Op: opReply, ID: id, Answer: a}); err != nil {
			return fmt.Errorf("answer %s: %w", id, err)
		}
		return nil
	}
	return fmt.Errorf("question id %s is pending in %d corvid processes (%s); answer it in the editor or wait for it to time out", id, len(holders), strings.Join(holders, ", "))
}

type snapshot struct {
	path string
	resp response
}

// survey asks every broker in p for its pending questions, concurrently.
// Stale entries are removed; live ones that fail are reported in the error.
func survey(p Place) ([]snapshot, error) {
	var paths []string
	for _, dir := range p.clientDirs() {
		for _, suffix := range []string{".sock", ".addr"} {
			m, err := filepath.Glob(filepath.Join(dir, "corvid-*"+suffix))
			if err != nil {
				return nil, fmt.Errorf("look for corvid processes: %w", err)
			}
			paths = append(paths, m...)
		}
	}
	snaps := make([]snapshot, len(paths))
	errs := make([]error, len(paths))
	ok := make([]bool, len(paths))
	var wg sync.WaitGroup
	for i, path := range paths {
		wg.Go(func() {
			resp, err := call(path, request{Op: opList})
			switch {
			case err == nil:
				snaps[i], ok[i] = snapshot{path, resp}, true
			case errors.Is(err, os.ErrNotExist):
				// Gone between the glob and the dial.
			case errors.Is(err, syscall.ECONNREFUSED):
				if stale(path) {
					_ = os.Remove(path)
				}
			default:
				errs[i] = fmt.Errorf("%s: %w", filepath.Base(path), err)
			}
		})
	}
	wg.Wait()
	var live []snapshot
	for i := range snaps {
		if ok[i] {
			live = append(live, snaps[i])
		}
	}
	return live, errors.Join(errs...)
}

// dialEntry connects to the broker of a directory entry: a socket file,
// or a .addr file holding the name of an abstract socket (Linux).
func dialEntry(path string, timeout time.Duration) (*net.UnixConn, error) {
	addr := path
	if strings.HasSuffix(path, ".addr") {
		name, err := readEntry(path)
		if err != nil {
			return nil, err
		}
		addr = name
	}
	c, err := net.DialTimeout("unix", addr, timeout)
	if err != nil {
		return nil, err
	}
	return c.(*net.UnixConn), nil
}

// readEntry reads the abstract socket name in a .addr file: a regular
// file, not a link, holding "@corvid-…".
func readEntry(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Size() > 256 {
		return "", fmt.Errorf("%s is not a control socket entry", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	name := strings.TrimSpace(string(b))
	if !strings.HasPrefix(name, "@corvid-") {
		return "", fmt.Errorf("%s does not name a corvid socket", path)
	}
	return name, nil
}

// stale reports whether a socket that refuses connections was left by a
// process that no longer runs. A refusing socket of a live process is kept:
// it may be between bind and listen.
func stale(path string) bool {
	pid, ok := socketPID(filepath.Base(path))
	if !ok {
		return true
	}
	if pid == os.Getpid() {
		heldMu.Lock()
		defer heldMu.Unlock()
		return !held[path]
	}
	return !processAlive(pid)
}

// socketPID reads the pid from corvid-<pid>.sock or corvid-<pid>-<n>.sock
// (or .addr).
func socketPID(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "corvid-")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, ".sock")
	if !ok {
		if s, ok = strings.CutSuffix(name[len("corvid-"):], ".addr"); !ok {
			return 0, false
		}
	}
	s, _, _ = strings.Cut(s, "-")
	pid, err := strconv.Atoi(s)
	return pid, err == nil && pid > 0
}

// call makes one request of the corvid process at path, after checking the
// process runs as our user: an answer must never go to someone else's
// socket.
func call(path string, req request) (response, error) {
	conn, err := dialEntry(path, dialTimeout)
	if err != nil {
		return response{}, err
	}
	defer conn.Close()
	uid, err := peerUID(conn)
	if err != nil {
		return response{}, fmt.Errorf("check the owner of %s: %w", path, err)
	}
	if uid != os.Getuid() {
		return response{}, fmt.Errorf("%s is served by uid %d, not by us", path, uid)
	}
	_ = conn.SetDeadline(time.Now().Add(connDeadline))
	// A server that refuses us answers and hangs up without reading, so a
	// failed write may still leave its reason to read.
	writeErr := json.NewEncoder(conn).Encode(req)
	var resp response
	if err := json.NewDecoder(io.LimitReader(conn, 16<<20)).Decode(&resp); err != nil {
		if writeErr != nil {
			return response{}, fmt.Errorf("ask %s: %w", path, writeErr)
		}
		return response{}, fmt.Errorf("read answer of %s: %w", path, err)
	}
	if resp.Error != "" {
		return resp, errors.New(resp.Error)
	}
	return resp, nil
}
