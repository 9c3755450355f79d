//go:build unix

package tool

import "syscall"

// read loads a whole text file with plain system calls: os.Open would
// also try to register every file with the network poller and set a
// finalizer, which costs more than reading a small source file.
// It opens without blocking and checks the opened file is regular, so a
// FIFO swapped in after the walk saw a regular file cannot hang the search.
// A file whose first block holds a NUL byte is binary and read no further
// (a module cache is full of zip files); a larger text file is read into a
// buffer of its size, not grown by doubling.
func (buf *grepBuffer) read(path string) ([]byte, string) {
	fd, err := rawOpen(path, syscall.O_RDONLY|openNoBlock)
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
	n := 0
	for {
		if n == len(b) {
			if n >= maxGrepFile {
				return nil, skipTooLarge
			}
			if !isText(b[:min(n, 8192)]) {
				return nil, skipBinary
			}
			// The size fstat gave, and room to see the end; doubling
			// only if the file grows while being read.
			grown := make([]byte, max(int(st.Size)+4096, 2*len(b)))
			copy(grown, b[:n])
			b = grown
			if len(b) <= maxKeptGrepBuffer {
				buf.b = b
			}
		}
		k, err := rawRead(fd, b[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, skipUnreadable
		}
		n += k
		if k == 0 || n >= int(st.Size) && n < len(b) && st.Size > 0 {
			// The end: a read returned nothing, or the file's size is
			// read (a file that grows meanwhile is searched as it was).
			return b[:n], skipNone
		}
	}
}

// maxKeptGrepBuffer is the largest read buffer kept for the next file.
const maxKeptGrepBuffer = 8 << 20
