package serve

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
)

// maxRounds bounds how often the descendants are listed again while new
// ones keep appearing (a process handing the connection to a child it just
// forked, then exiting); past it the connection is refused.
const maxRounds = 8

// refuseTCPDescendant says why the peer of a loopback TCP connection may
// not be served: a process below the daemon holds its end. TCP carries no
// peer credentials, so the daemon looks: its descendants, from
// /proc/PID/task/TID/children (none: done, the usual case), then the
// peer socket's inode, from the line of /proc/net/tcp or tcp6 whose local
// address is the connection's remote one, then each descendant's open
// files for that socket. Descendants that appear meanwhile are looked at
// too, until a round finds none new. Anything that cannot be told (a
// descendant whose files are hidden from us, a peer already gone) refuses:
// fail closed.
func refuseTCPDescendant(c net.Conn) error {
	self := os.Getpid()
	pids, err := descendants(self)
	if err != nil {
		return fmt.Errorf("cannot list the processes this daemon started: %w", err)
	}
	if len(pids) == 0 {
		return nil
	}
	inode, err := peerInode(c.RemoteAddr(), c.LocalAddr())
	if err != nil {
		return err
	}
	link := "socket:[" + strconv.FormatUint(inode, 10) + "]"
	seen := map[int]bool{}
	for range maxRounds {
		fresh := 0
		for _, pid := range pids {
			if seen[pid] {
				continue
			}
			seen[pid] = true
			fresh++
			holds, err := holdsFile(pid, link)
			if err != nil {
				return err
			}
			if holds {
				return errDescendant(pid)
			}
		}
		if fresh == 0 {
			return nil
		}
		if pids, err = descendants(self); err != nil {
			return fmt.Errorf("cannot list the processes this daemon started: %w", err)
		}
	}
	return errors.New("cannot tell who connects: the processes this daemon started kept changing")
}

// descendants lists every process below pid, through the children files
// of each of their threads (a Go process forks from any thread). Without
// those files (a kernel built without CONFIG_PROC_CHILDREN) it walks the
// parent of every process instead.
func descendants(pid int) ([]int, error) {
	if !haveChildren() {
		return descendantsByParent(pid)
	}
	var out []int
	queue := []int{pid}
	var buf []byte
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		dir := "/proc/" + strconv.Itoa(p) + "/task/"
		tasks, err := os.ReadDir(dir)
		if err != nil {
			if p != pid && errors.Is(err, fs.ErrNotExist) {
				continue // it exited
			}
			return nil, err
		}
		for _, t := range tasks {
			buf, err = readInto(buf, dir+t.Name()+"/children")
			if err != nil {
				continue // the thread or the process ended
			}
			for _, f := range bytes.Fields(buf) {
				if c, err := strconv.Atoi(string(f)); err == nil && !slices.Contains(out, c) {
					out = append(out, c)
					queue = append(queue, c)
				}
			}
		}
	}
	return out, nil
}

// haveChildren says whether the kernel has /proc/PID/task/TID/children.
var haveChildren = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/self/task/" + strconv.Itoa(os.Getpid()) + "/children")
	return err == nil
})

// descendantsByParent is descendants from every process's parent.
func descendantsByParent(pid int) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	kids := map[int][]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 2 {
			continue
		}
		if pp, err := strconv.Atoi(string(f[1])); err == nil {
			kids[pp] = append(kids[pp], p)
		}
	}
	var out []int
	for queue := kids[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, kids[queue[0]]...)
	}
	return out, nil
}

// readInto reads a small /proc file into buf's storage.
func readInto(buf []byte, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return buf, err
	}
	defer f.Close()
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil || n == 0 {
			return buf, nil
		}
	}
}

// holdsFile says whether process pid has link ("socket:[INODE]") open. A
// process that exited holds nothing; one whose files we may not see (it
// made itself undumpable, or runs as another user) cannot be told apart,
// and errs.
func holdsFile(pid int, link string) (bool, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	f, err := os.Open(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("cannot tell who connects: the files of process %d, which this daemon started, are hidden: %w", pid, err)
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return false, nil // it exited while listed
	}
	for _, n := range names {
		if l, err := os.Readlink(dir + n); err == nil && l == link {
			return true, nil
		}
	}
	return false, nil
}
