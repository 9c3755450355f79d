//go:build unix

package tool

import "syscall"

// read loads a whole file with plain system calls: os.Open would also try
// to register every file with the network poller and set a finalizer,
// which costs more than reading a small source file.
// It opens without blocking and checks the opened file is regular, so a
// FIFO swapped in after the walk saw a regular file cannot hang the search.
func (buf *grepBuffer) read(path string) ([]byte, string) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|openNoBlock, 0)
	if err != nil {
		return nil, skipUnreadable
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, skipUnreadable
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, skipNotRegular
	}
	if st.Size > maxGrepFile {
		return nil, skipTooLarge
	}
	n := 0
	for {
		if n == len(buf.b) {
			if n >= maxGrepFile {
				return nil, skipTooLarge
			}
			grown := make([]byte, 2*len(buf.b))
			copy(grown, buf.b[:n])
			buf.b = grown
		}
		k, err := syscall.Read(fd, buf.b[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, skipUnreadable
		}
		if k == 0 {
			return buf.b[:n], skipNone
		}
		n += k
	}
}
