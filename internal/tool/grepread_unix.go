//go:build unix

package tool

import "syscall"

// read loads a whole text file with plain system calls: os.Open would
// also try to register every file with the network poller and set a
// finalizer, which costs more than reading a small source file.
// It opens without blocking and checks the opened file is regular, so a
// FIFO swapped in after the walk saw a regular file cannot hang the search.
// A file whose first block holds a NUL byte is binary and read no further
// (a module cache is full of zip files).
//
// A file larger than the buffer is skimmed when sk is set: read through
// the buffer window by window (each keeping the last sk.keep bytes of the
// one before) and loaded whole only when a window passes sk.pass; when
// none does read returns no data and no reason, nothing to search. Most
// large files hold no match, and skimming them reuses one small buffer
// where loading them allocated and touched fresh memory of their size.
// Without sk (a pattern with no required literal) a larger text file is
// read into a buffer of its size, not grown by doubling.
//
// With at.fd set (the walk's descriptor of the directory it is listing) the
// file is opened by name relative to it: the kernel then looks up one
// name, not every component of a long path.
func (buf *grepBuffer) read(path string, at dirRef, sk *skimmer) ([]byte, string) {
	var fd int
	var err error
	if at.fd >= 0 {
		fd, err = rawOpenat(at.fd, at.name, syscall.O_RDONLY|openNoBlock)
	} else {
		fd, err = rawOpen(path, syscall.O_RDONLY|openNoBlock)
	}
	if err != nil {
		return nil, skipUnreadable
	}
	defer rawClose(fd)
	var st syscall.Stat_t
	if err := rawFstat(fd, &st); err != nil {
		return nil, skipUnreadable
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, skipNotRegular
	}
	if st.Size > maxGrepFile {
		return nil, skipTooLarge
	}
	b := buf.b
	n, end, err := fillBuffer(fd, b, int(st.Size))
	if err != nil {
		return nil, skipUnreadable
	}
	if end {
		return b[:n], skipNone
	}
	if !isText(b[:min(n, 8192)]) {
		return nil, skipBinary
	}
	if sk == nil {
		return buf.readRest(fd, st.Size, n)
	}
	read := n // bytes of the file read so far
	for {
		if sk.pass(b[:n]) {
			return buf.readRest(fd, st.Size, 0)
		}
		if end {
			return nil, skipNone
		}
		keep := min(sk.keep, n)
		copy(b, b[n-keep:n])
		k, eof, err := fillBuffer(fd, b[keep:], int(st.Size)-read)
		if err != nil {
			return nil, skipUnreadable
		}
		if read += k; read > maxGrepFile {
			return nil, skipTooLarge
		}
		n, end = keep+k, eof
		if k == 0 {
			return nil, skipNone
		}
	}
}

// fillBuffer reads from fd's offset until b is full or the file ends. left
// is how much of the file fstat says is still to read: once that much is
// read into a buffer with room to spare, the end is taken as reached
// without another read (a file that grows meanwhile is searched as it
// was). end reports that the file ended within b.
func fillBuffer(fd int, b []byte, left int) (n int, end bool, err error) {
	for n < len(b) {
		k, err := rawRead(fd, b[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, false, err
		}
		n += k
		if k == 0 || n >= left && n < len(b) && left > 0 {
			return n, true, nil
		}
	}
	return n, false, nil
}

// readRest loads the whole file into buf.big: the first from bytes are
// those in buf.b; the rest is read from that offset on. The buffer is
// the size fstat gave, with room to see the end; it doubles only if the
// file grows while being read.
func (buf *grepBuffer) readRest(fd int, size int64, from int) ([]byte, string) {
	want := int(size) + 4096
	b := buf.big
	if len(b) < want {
		b = make([]byte, want)
		if len(b) <= maxKeptGrepBuffer {
			buf.big = b
		}
	}
	n := copy(b, buf.b[:from])
	for {
		if n == len(b) {
			if n >= maxGrepFile {
				return nil, skipTooLarge
			}
			grown := make([]byte, 2*len(b))
			copy(grown, b[:n])
			b = grown
		}
		k, err := syscall.Pread(fd, b[n:], int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, skipUnreadable
		}
		n += k
		if k == 0 || n >= int(size) && n < len(b) && size > 0 {
			if n > maxGrepFile {
				return nil, skipTooLarge
			}
			return b[:n], skipNone
		}
	}
}

// maxKeptGrepBuffer is the largest whole-file buffer kept for the next
// file.
const maxKeptGrepBuffer = 8 << 20
