package fastrelay

// The editor's initialize, read without a JSON decoder (this package runs
// before encoding/json is initialised, and imports nothing that is not
// already): the relay answers it from the daemon's published answers
// (acpserver/initanswers.go) when it is sure which one the daemon would
// give. Anything it is not sure the daemon reads the same way (a key
// spelled in another case, which encoding/json would match; an escape in
// a key; a duplicate; a value of another type than the daemon's decoder
// takes) is not answered here: the line goes to the daemon, which answers
// as before. TestRelayKeyIsTheDaemonsKey and FuzzInitRequest hold this
// reading to the daemon's own.

// answersSuffix names the file of the daemon's initialize answers beside
// its socket (acpserver.InitAnswersSuffix, TestAnswersFileIsTheDaemons).
const answersSuffix = ".init"

// answersHeader is that file's first line (acpserver.InitAnswersHeader).
const answersHeader = "corvid initialize answers 2"

// maxDepth bounds the nesting the scanner follows; deeper is not answered.
const maxDepth = 64

// initRequest reads line, one JSON-RPC message without its newline. When
// it is an initialize request the relay may answer, it returns the id's
// bytes as sent and the key of the published answer
// (acpserver.InitAnswerKey).
func initRequest(line []byte) (id []byte, key string, ok bool) {
	s := &scanner{b: line}
	r := &initReq{}
	s.ws()
	s.object(0, r.top)
	s.ws()
	if s.bad || s.i != len(s.b) || !r.isInit || !r.rpc2 || r.id == nil || !r.params {
		return nil, "", false
	}
	return r.id, r.dialect + "," + bit(r.watch) + "," + bit(r.terminal), true
}

func bit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// initReq is what the fields seen so far said.
type initReq struct {
	seen     map[string]bool
	rpc2     bool
	isInit   bool
	params   bool
	id       []byte
	dialect  string
	watch    bool
	terminal bool
}

// once reports whether key, in the object named by where, is seen for
// the first time; a duplicate marks the line bad.
func (r *initReq) once(s *scanner, where string, key []byte) bool {
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	k := where + "\x00" + string(key)
	if r.seen[k] {
		s.bad = true
		return false
	}
	r.seen[k] = true
	return true
}

// top reads a field of the message.
func (r *initReq) top(s *scanner, key []byte, esc bool, depth int) {
	name, known := foldMatch(key, "jsonrpc", "id", "method", "params", "result", "error")
	if esc || (known && name != string(key)) || !r.once(s, "", fold(key)) {
		s.bad = true
		return
	}
	switch {
	case !known:
		s.value(depth)
	case name == "jsonrpc":
		v, e := s.str()
		r.rpc2 = !e && string(v) == "2.0"
	case name == "id":
		r.id = s.id()
	case name == "method":
		v, e := s.str()
		r.isInit = !e && string(v) == "initialize"
	case name == "params":
		r.params = true
		s.object(depth, r.param)
	default: // result, error: not a request
		s.bad = true
	}
}

// param reads a field of initialize's params (acp.InitializeRequest: its
// field names match in any case).
func (r *initReq) param(s *scanner, key []byte, esc bool, depth int) {
	name, known := foldMatch(key, "protocolVersion", "clientCapabilities", "clientInfo", "_meta")
	if esc || (known && name != string(key)) || !r.once(s, "params", fold(key)) {
		s.bad = true
		return
	}
	switch {
	case !known:
		s.value(depth)
	case name == "protocolVersion":
		if !s.integer() {
			s.bad = true
		}
	case name == "clientCapabilities":
		if !s.null() {
			s.object(depth, r.caps)
		}
	case name == "clientInfo":
		if !s.null() {
			s.object(depth, r.info)
		}
	default: // _meta
		if !s.null() {
			s.object(depth, r.meta)
		}
	}
}

// info reads a field of clientInfo (acp.Implementation): its strings must
// be strings, or the daemon's decoder refuses the request.
func (r *initReq) info(s *scanner, key []byte, esc bool, depth int) {
	name, known := foldMatch(key, "name", "title", "version", "_meta")
	switch {
	case esc:
		s.bad = true
	case !known:
		s.value(depth)
	case name == "_meta":
		if !s.null() {
			s.object(depth, skipField)
		}
	default:
		if !s.null() {
			s.str()
		}
	}
}

// meta reads a key of params._meta (a map: keys match exactly).
func (r *initReq) meta(s *scanner, key []byte, esc bool, depth int) {
	if esc {
		s.bad = true
		return
	}
	if string(key) != "corvid.dev/dialect" {
		s.value(depth)
		return
	}
	if !r.once(s, "_meta", key) {
		return
	}
	v, e := s.str()
	if e {
		s.bad = true
	}
	r.dialect = string(v)
}

// caps reads a key of clientCapabilities (decoded as a map: keys match
// exactly; acp.ClientCapabilities.UnmarshalJSON).
func (r *initReq) caps(s *scanner, key []byte, esc bool, depth int) {
	switch {
	case esc:
		s.bad = true
	case string(key) == "auth":
		if r.once(s, "caps", key) {
			s.object(depth, r.auth)
		}
	case string(key) == "_meta":
		if r.once(s, "caps", key) {
			s.object(depth, r.capsMeta)
		}
	default:
		s.value(depth)
	}
}

// auth reads a key of clientCapabilities.auth.
func (r *initReq) auth(s *scanner, key []byte, esc bool, depth int) {
	switch {
	case esc:
		s.bad = true
	case string(key) == "terminal":
		if r.once(s, "auth", key) {
			r.terminal = s.boolean()
		}
	default:
		s.value(depth)
	}
}

// capsMeta reads a key of clientCapabilities._meta.
func (r *initReq) capsMeta(s *scanner, key []byte, esc bool, depth int) {
	switch {
	case esc:
		s.bad = true
	case string(key) == "corvid.dev/sessionsChanged":
		if r.once(s, "capsMeta", key) {
			r.watch = s.boolean()
		}
	default:
		s.value(depth)
	}
}

func skipField(s *scanner, _ []byte, _ bool, depth int) { s.value(depth) }

// foldMatch returns the name among names that key equals ignoring ASCII
// case (encoding/json's matching of struct fields, for these names).
func foldMatch(key []byte, names ...string) (string, bool) {
	for _, n := range names {
		if string(fold(key)) == string(fold([]byte(n))) {
			return n, true
		}
	}
	return "", false
}

// fold lowers ASCII letters and maps the two non-ASCII letters that
// encoding/json folds onto ASCII ones (ſ to s, K to k) to them as well,
// so that a key spelled with them is caught as a known name.
func fold(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case c == 0xc5 && i+1 < len(b) && b[i+1] == 0xbf: // ſ U+017F
			c, i = 's', i+1
		case c == 0xe2 && i+2 < len(b) && b[i+1] == 0x84 && b[i+2] == 0xaa: // K U+212A
			c, i = 'k', i+2
		}
		out = append(out, c)
	}
	return out
}

// scanner reads JSON from b; bad is set at the first thing it does not
// take, and everything after is ignored.
type scanner struct {
	b   []byte
	i   int
	bad bool
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	s.ws()
	if s.bad || s.i >= len(s.b) {
		s.bad = true
		return 0
	}
	return s.b[s.i]
}

func (s *scanner) expect(c byte) {
	if s.peek() != c {
		s.bad = true
		return
	}
	s.i++
}

// object reads an object, calling field for each key with the scanner at
// its value, which field must read.
func (s *scanner) object(depth int, field func(s *scanner, key []byte, esc bool, depth int)) {
	if depth >= maxDepth {
		s.bad = true
		return
	}
	s.expect('{')
	if s.peek() == '}' {
		s.i++
		return
	}
	for !s.bad {
		key, esc := s.str()
		s.expect(':')
		if s.bad {
			return
		}
		s.ws()
		field(s, key, esc, depth+1)
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return
		default:
			s.bad = true
		}
	}
}

// value reads any value.
func (s *scanner) value(depth int) {
	switch c := s.peek(); {
	case s.bad:
	case c == '{':
		s.object(depth, skipField)
	case c == '[':
		s.array(depth)
	case c == '"':
		s.str()
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	default:
		s.number()
	}
}

func (s *scanner) array(depth int) {
	if depth >= maxDepth {
		s.bad = true
		return
	}
	s.expect('[')
	if s.peek() == ']' {
		s.i++
		return
	}
	for !s.bad {
		s.value(depth + 1)
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return
		default:
			s.bad = true
		}
	}
}

func (s *scanner) literal(word string) {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		s.bad = true
		return
	}
	s.i += len(word)
}

// null reads null if that is what comes.
func (s *scanner) null() bool {
	if s.peek() == 'n' {
		s.literal("null")
		return true
	}
	return false
}

// boolean reads true or false; anything else is bad.
func (s *scanner) boolean() bool {
	switch s.peek() {
	case 't':
		s.literal("true")
		return true
	case 'f':
		s.literal("false")
	default:
		s.bad = true
	}
	return false
}

// str reads a string and returns its bytes between the quotes as they
// are, and whether they hold an escape. Bytes that are not UTF-8 are
// taken (the daemon's decoder replaces them); control characters are not.
func (s *scanner) str() ([]byte, bool) {
	s.expect('"')
	start, esc := s.i, false
	for !s.bad && s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], esc
		case c < 0x20:
			s.bad = true
		case c == '\\':
			esc = true
			s.escape()
		default:
			s.i++
		}
	}
	s.bad = true
	return nil, esc
}

func (s *scanner) escape() {
	s.i++ // the backslash
	if s.i >= len(s.b) {
		s.bad = true
		return
	}
	c := s.b[s.i]
	s.i++
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
	case 'u':
		for k := 0; k < 4; k++ {
			if s.i >= len(s.b) || !isHex(s.b[s.i]) {
				s.bad = true
				return
			}
			s.i++
		}
	default:
		s.bad = true
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number reads a number (JSON's grammar).
func (s *scanner) number() {
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.i < len(s.b) && '1' <= s.b[s.i] && s.b[s.i] <= '9':
		s.digits()
	default:
		s.bad = true
		return
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			s.bad = true
			return
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			s.bad = true
			return
		}
	}
	if s.i == start {
		s.bad = true
	}
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// integer reads a non-negative integer without fraction or exponent.
func (s *scanner) integer() bool {
	if c := s.peek(); c < '0' || c > '9' {
		return false
	}
	start := s.i
	s.number()
	for _, c := range s.b[start:s.i] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return !s.bad
}

// id reads a request id the relay echoes as sent: a non-negative integer
// of at most 15 digits, or a string without escapes; nil otherwise.
func (s *scanner) id() []byte {
	start := s.peek()
	from := s.i
	switch {
	case start == '"':
		if _, esc := s.str(); esc || s.bad {
			return nil
		}
	case s.integer() && s.i-from <= 15:
	default:
		s.bad = true
		return nil
	}
	return s.b[from:s.i]
}
