package scenario

import (
	"bytes"
	"strings"
)

// archive is a txtar file (the format of golang.org/x/tools/txtar, which this module
// does not otherwise link): a free-text comment, then files, each introduced by a line
// "-- NAME --" and running to the next such line. Forty lines here are cheaper than a
// dependency on x/tools.
type archive struct {
	comment string
	files   []file
}

type file struct {
	name string
	data string
}

// parseArchive splits data into its comment and files. Each file's data ends with a
// newline (one is added if the archive lacks it).
func parseArchive(data []byte) archive {
	var a archive
	cur := &a.comment
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		data = rest
		if name, ok := marker(string(line)); ok {
			a.files = append(a.files, file{name: name})
			cur = &a.files[len(a.files)-1].data
			continue
		}
		*cur += string(line) + "\n"
	}
	return a
}

// marker reports whether line is "-- NAME --" and returns NAME.
func marker(line string) (string, bool) {
	if !strings.HasPrefix(line, "-- ") || !strings.HasSuffix(line, " --") || len(line) < 7 {
		return "", false
	}
	return strings.TrimSpace(line[3 : len(line)-3]), true
}

// format is the inverse of parseArchive.
func (a archive) format() []byte {
	var b bytes.Buffer
	b.WriteString(a.comment)
	for _, f := range a.files {
		b.WriteString("-- " + f.name + " --\n")
		b.WriteString(f.data)
		if f.data != "" && !strings.HasSuffix(f.data, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// get returns the data of the file called name.
func (a archive) get(name string) (string, bool) {
	for _, f := range a.files {
		if f.name == name {
			return f.data, true
		}
	}
	return "", false
}

// set replaces (or appends) the file called name.
func (a *archive) set(name, data string) {
	for i := range a.files {
		if a.files[i].name == name {
			a.files[i].data = data
			return
		}
	}
	a.files = append(a.files, file{name: name, data: data})
}
