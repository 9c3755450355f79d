package fastrelay

import "syscall"

// answerInitialize reads the editor's first line and forwards it (and
// whatever came with it) to the daemon at sock. When it is an initialize
// the published answers cover (initreq.go), the editor gets the answer
// from the file at once, stdin's copy starts, and the daemon's own answer,
// when it comes, must be the same: if it is not, and the file does not
// say the same by then (the daemon publishes a changed answer before it
// gives it, acpserver/initanswers.go), the relay ends with an error
// rather than leave the editor with an answer the daemon did not give.
// answered false: nothing was answered, and the daemon's first answer is
// still to be copied (firstAnswer). stdinEnded: stdin ended meanwhile.
func answerInitialize(sock int, answers string) (stdinEnded, answered bool, err error) {
	buf := make([]byte, 16<<10)
	n, eol := 0, -1
	for eol < 0 && n < len(buf) {
		m, err := syscall.Read(0, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || m == 0 {
			stdinEnded = true
			break
		}
		for i := n; i < n+m; i++ {
			if buf[i] == '\n' {
				eol = i
				break
			}
		}
		n += m
	}
	var answer []byte
	if eol >= 0 {
		if id, key, ok := initRequest(buf[:eol]); ok {
			if result := publishedAnswer(answers, key); result != nil {
				answer = response(id, result)
			}
		}
	}
	if err := writeAll(sock, buf[:n]); err != nil {
		return stdinEnded, false, err
	}
	if stdinEnded {
		_ = syscall.Shutdown(sock, syscall.SHUT_WR)
	}
	if answer == nil {
		return stdinEnded, false, nil
	}
	if err := writeAll(1, answer); err != nil {
		return stdinEnded, true, err
	}
	if !stdinEnded {
		go func() {
			_ = copyFD(sock, 0)
			_ = syscall.Shutdown(sock, syscall.SHUT_WR)
		}()
	}
	return stdinEnded, true, checkAnswer(sock, answers, buf[:eol], answer)
}

// checkAnswer reads the daemon's first line and compares it with the
// answer the relay gave; what follows the line is written to stdout.
func checkAnswer(sock int, answers string, request, gave []byte) error {
	buf := make([]byte, 8<<10)
	n, eol := 0, -1
	for eol < 0 {
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
		}
		m, err := syscall.Read(sock, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if m == 0 {
			if n == 0 {
				return nil // the daemon closed: copyFD sees it too
			}
			return errorString("the daemon closed the connection in the middle of its answer to initialize")
		}
		for i := n; i < n+m; i++ {
			if buf[i] == '\n' {
				eol = i
				break
			}
		}
		n += m
	}
	got := buf[:eol+1]
	if string(got) != string(gave) {
		id, key, _ := initRequest(request)
		if fresh := publishedAnswer(answers, key); fresh == nil || string(response(id, fresh)) != string(got) {
			return errorString("the daemon's answer to initialize is not the one this relay gave the editor from " + answers + "; start the editor's agent again. The daemon answered: " + clip(got, 300))
		}
		// The daemon's answer changed as the editor connected (its
		// model or configuration); the editor holds the previous one,
		// as a client that connected a moment earlier does.
	}
	return writeAll(1, buf[eol+1:n])
}

// response is the JSON-RPC response carrying result to the request id,
// as the daemon's protocol connection writes it.
func response(id, result []byte) []byte {
	out := make([]byte, 0, len(result)+len(id)+40)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, `,"result":`...)
	out = append(out, result...)
	return append(out, "}\n"...)
}

// publishedAnswer is the result the daemon published for key in the file
// at path, or nil: no file, not the user's own private file, another
// format, no such key. It reads the file's index, then only that answer's
// bytes (acpserver.encodeInitAnswers).
func publishedAnswer(path, key string) []byte {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG ||
		st.Uid != uint32(syscall.Geteuid()) || st.Mode&0o077 != 0 {
		return nil
	}
	var head [4096]byte
	n := preadFull(fd, head[:], 0)
	b := head[:n]
	if len(b) <= len(answersHeader) || string(b[:len(answersHeader)+1]) != answersHeader+"\n" {
		return nil
	}
	want := key + " "
	for i := len(answersHeader) + 1; i < len(b) && b[i] != '\n'; {
		end := i
		for end < len(b) && b[end] != '\n' {
			end++
		}
		line := b[i:end]
		i = end + 1
		if len(line) <= len(want) || string(line[:len(want)]) != want {
			continue
		}
		off, rest, ok := decimal(line[len(want):])
		if !ok || len(rest) == 0 || rest[0] != ' ' {
			return nil
		}
		size, rest, ok := decimal(rest[1:])
		if !ok || len(rest) != 0 || size == 0 || off+size > int(st.Size) {
			return nil
		}
		out := make([]byte, size+1)
		if preadFull(fd, out, off) != len(out) || out[size] != '\n' {
			return nil
		}
		return out[:size]
	}
	return nil
}

// decimal reads the digits b starts with (at most 9).
func decimal(b []byte) (int, []byte, bool) {
	v, i := 0, 0
	for i < len(b) && i < 9 && '0' <= b[i] && b[i] <= '9' {
		v = v*10 + int(b[i]-'0')
		i++
	}
	return v, b[i:], i > 0
}

// preadFull reads into buf from offset off until it is full or the file
// ends, and returns how much it read.
func preadFull(fd int, buf []byte, off int) int {
	n := 0
	for n < len(buf) {
		m, err := syscall.Pread(fd, buf[n:], int64(off+n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil || m == 0 {
			break
		}
		n += m
	}
	return n
}

// clip is b's first n bytes as text.
func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

type errorString string

func (e errorString) Error() string { return string(e) }
