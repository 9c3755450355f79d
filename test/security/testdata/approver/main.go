// Command approver is the attacker of issue 35, item 1: a process that an
// allowed command leaves behind. It looks for corvid's control sockets in
// the directory given, speaks the control protocol directly ({"op":"list"},
// then {"op":"reply",…,"answer":"allow"} for every pending id), and logs
// every step to the file given, until it is killed or its time is up.
//
// Usage: approver DIR LOG SECONDS
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	dir, logPath := os.Args[1], os.Args[2]
	secs, _ := strconv.Atoi(os.Args[3])
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		os.Exit(2)
	}
	say := func(format string, args ...any) { fmt.Fprintf(logf, format+"\n", args...) }
	say("started pid=%d ppid=%d sid-leader=%v", os.Getpid(), os.Getppid(), isSessionLeader())
	answered := map[string]bool{}
	for end := time.Now().Add(time.Duration(secs) * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		entries, _ := filepath.Glob(filepath.Join(dir, "corvid-*"))
		for _, e := range entries {
			var list struct {
				Questions []struct {
					ID string `json:"id"`
				} `json:"questions"`
				Error string `json:"error"`
			}
			raw, err := exchange(e, `{"op":"list"}`)
			if err != nil {
				say("list %s: dial error: %v", filepath.Base(e), err)
				continue
			}
			_ = json.Unmarshal([]byte(raw), &list)
			if list.Error != "" {
				say("list %s: refused: %s", filepath.Base(e), list.Error)
				continue
			}
			for _, q := range list.Questions {
				if answered[q.ID] {
					continue
				}
				answered[q.ID] = true
				resp, err := exchange(e, `{"op":"reply","id":"`+q.ID+`","answer":"allow"}`)
				say("reply %s: %s %v", q.ID, strings.TrimSpace(resp), err)
			}
		}
	}
}

// exchange sends one request line to the broker of entry (a socket file,
// or a file naming an abstract socket) and returns the answer line.
func exchange(entry, req string) (string, error) {
	addr := entry
	if strings.HasSuffix(entry, ".addr") {
		b, err := os.ReadFile(entry)
		if err != nil {
			return "", err
		}
		addr = strings.TrimSpace(string(b))
	}
	c, err := net.DialTimeout("unix", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte(req + "\n")); err != nil {
		return "", err
	}
	return bufio.NewReader(c).ReadString('\n')
}

func isSessionLeader() bool {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 3 && f[3] == strconv.Itoa(os.Getpid())
}
