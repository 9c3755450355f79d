package respond

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

type asked struct {
	answer Answer
	err    error
}

func listen(t *testing.T, dir string) *Broker {
	t.Helper()
	b, err := Listen(Place{Dir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func askAsync(b *Broker, q Question, timeout time.Duration) <-chan asked {
	return askAsyncCtx(context.Background(), b, q, timeout)
}

func askAsyncCtx(ctx context.Context, b *Broker, q Question, timeout time.Duration) <-chan asked {
	ch := make(chan asked, 1)
	go func() {
		a, err := b.Ask(ctx, q, timeout)
		ch <- asked{a, err}
	}()
	return ch
}

// waitPending waits until b holds n questions and returns them.
func waitPending(t *testing.T, b *Broker, n int) []Question {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		qs := b.Pending()
		if len(qs) == n {
			return qs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d questions pending, want %d", len(qs), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func receive(t *testing.T, ch <-chan asked) asked {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("Ask did not return")
		return asked{}
	}
}

func TestAskReturnsTheAnswerGivenThroughReply(t *testing.T) {
	for _, a := range []Answer{Allow, Always, Deny} {
		t.Run(string(a), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			b := listen(t, dir)
			res := askAsync(b, Question{SessionID: "s1", Title: "Run shell: ls", Cwd: "/src"}, 0)
			q := waitPending(t, b, 1)[0]
			if len(q.ID) != 4 || q.ID[0] != 'q' {
				t.Errorf("id %q is not short and human-typable", q.ID)
			}
			if err := Reply(Place{Dir: dir}, q.ID, Answer(strings.ToUpper(string(a)))); err != nil {
				t.Fatal(err)
			}
			if r := receive(t, res); r.answer != a || r.err != nil {
				t.Fatalf("Ask = %q, %v; want %q, nil", r.answer, r.err, a)
			}
			if qs := b.Pending(); len(qs) != 0 {
				t.Errorf("still pending after the answer: %v", qs)
			}
		})
	}
}

func TestAskDeniesWhenNobodyAnswersInTime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := listen(t, dir)
	r := receive(t, askAsync(b, Question{ID: "q222", Title: "Write file"}, 20*time.Millisecond))
	if r.answer != Deny || !errors.Is(r.err, ErrTimeout) {
		t.Fatalf("Ask = %q, %v; want deny with ErrTimeout", r.answer, r.err)
	}
	err := Reply(Place{Dir: dir}, "q222", Allow)
	if err == nil || !strings.Contains(err.Error(), "no longer pending") {
		t.Fatalf("late Reply = %v, want it to say the question is no longer pending", err)
	}
}

func TestAskDeniesWhenItsContextEnds(t *testing.T) {
	t.Parallel()
	b := listen(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	res := askAsyncCtx(ctx, b, Question{Title: "Run shell"}, time.Hour)
	waitPending(t, b, 1)
	cancel()
	if r := receive(t, res); r.answer != Deny || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("Ask = %q, %v; want deny with context.Canceled", r.answer, r.err)
	}
	if qs := b.Pending(); len(qs) != 0 {
		t.Errorf("still pending after cancel: %v", qs)
	}
}

func TestListSeesQuestionsOfEveryBrokerInTheDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b1, b2 := listen(t, dir), listen(t, dir)
	if b1.Path() == b2.Path() {
		t.Fatalf("both brokers listen on %s", b1.Path())
	}
	askAsync(b1, Question{ID: "q111", Title: "first", Asked: time.Unix(100, 0)}, 0)
	askAsync(b2, Question{ID: "q222", Title: "second", Asked: time.Unix(200, 0)}, 0)
	waitPending(t, b1, 1)
	waitPending(t, b2, 1)
	qs, err := List(Place{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 || qs[0].ID != "q111" || qs[1].ID != "q222" || qs[1].Title != "second" {
		t.Fatalf("List = %+v, want q111 then q222", qs)
	}
	if err := Reply(Place{Dir: dir}, "q222", Allow); err != nil {
		t.Fatal(err)
	}
	if len(b1.Pending()) != 1 {
		t.Error("answering q222 touched the other broker")
	}
}

// staleSocket leaves a socket file at path that nobody listens on. Tests
// that use it do not run in parallel: a child forked by a parallel test
// holds every open descriptor until it execs, and so can keep the "closed"
// listener accepting for a moment.
func staleSocket(t *testing.T, path string) {
	t.Helper()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
}

// staleEntry leaves an entry of the kind this platform's brokers make
// (entrySuffix) that nobody answers at.
func staleEntry(t *testing.T, path string) {
	t.Helper()
	if !strings.HasSuffix(path, ".addr") {
		staleSocket(t, path)
		return
	}
	if err := os.WriteFile(path, []byte("@corvid-0-0-nobody-listens-here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	return cmd.ProcessState.Pid()
}

func TestListRemovesSocketsOfProcessesThatAreGone(t *testing.T) {
	dir := t.TempDir()
	b := listen(t, dir)
	askAsync(b, Question{ID: "q333", Title: "live"}, 0)
	waitPending(t, b, 1)

	deadPeer := filepath.Join(dir, fmt.Sprintf("corvid-%d.sock", deadPID(t)))
	deadAbstract := filepath.Join(dir, fmt.Sprintf("corvid-%d.addr", deadPID(t)))
	ownLeftover := filepath.Join(dir, fmt.Sprintf("corvid-%d-77.sock", os.Getpid()))
	// pid 1 always runs: a refusing socket of a live process may be
	// between bind and listen, so it stays.
	liveButRefusing := filepath.Join(dir, "corvid-1.sock")
	for _, p := range []string{deadPeer, ownLeftover, liveButRefusing} {
		staleSocket(t, p)
	}
	staleEntry(t, deadAbstract)

	qs, err := List(Place{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 1 || qs[0].ID != "q333" {
		t.Fatalf("List = %+v, want only q333", qs)
	}
	for _, p := range []string{deadPeer, ownLeftover, deadAbstract} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale socket %s was not removed (%v)", filepath.Base(p), err)
		}
	}
	if _, err := os.Lstat(liveButRefusing); err != nil {
		t.Errorf("socket of a live process was removed: %v", err)
	}
	if _, err := os.Lstat(b.Path()); err != nil {
		t.Errorf("live broker's socket was removed: %v", err)
	}
}

func TestListenReplacesItsOwnPidsLeftoverSocket(t *testing.T) {
	dir := t.TempDir()
	leftover := filepath.Join(dir, fmt.Sprintf("corvid-%d%s", os.Getpid(), entrySuffix))
	staleEntry(t, leftover)
	b := listen(t, dir)
	if b.Path() != leftover {
		t.Errorf("Listen chose %s, want to reuse %s", b.Path(), leftover)
	}
}

func TestSocketAndDirectoryAdmitOnlyTheOwner(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b := listen(t, dir)
	fi, err := os.Stat(b.Path())
	if err != nil {
		t.Fatal(err)
	}
	// On Linux the entry is a file naming an abstract socket, elsewhere
	// the socket itself: private either way.
	if kind := fi.Mode().Type(); (kind != os.ModeSocket && kind != 0) || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket entry mode %v, want 0600", fi.Mode())
	}
	if want := fmt.Sprintf("corvid-%d", os.Getpid()); !strings.HasPrefix(filepath.Base(b.Path()), want) {
		t.Errorf("socket %s is not named after the pid", b.Path())
	}
	di, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", di.Mode().Perm())
	}
}

func TestListenCreatesTheDirectoryPrivate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a", "run")
	listen(t, dir)
	di, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", di.Mode().Perm())
	}
}

func TestReplyRefusesUnknownIDsAndBadAnswers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := listen(t, dir)
	res := askAsync(b, Question{ID: "q444", Title: "pending"}, 0)
	waitPending(t, b, 1)

	if err := Reply(Place{Dir: dir}, "qzzz", Allow); !errors.Is(err, ErrUnknownQuestion) {
		t.Errorf("Reply(unknown id) = %v, want ErrUnknownQuestion", err)
	}
	if err := Reply(Place{Dir: dir}, "q444", "yes"); !errors.Is(err, ErrBadAnswer) {
		t.Errorf("Reply(bad answer) = %v, want ErrBadAnswer", err)
	}
	if err := Reply(Place{Dir: dir}, "", Allow); err == nil {
		t.Error("Reply with an empty id succeeded")
	}
	if err := Reply(Place{Dir: t.TempDir()}, "q444", Allow); !errors.Is(err, ErrUnknownQuestion) {
		t.Errorf("Reply in an empty dir = %v, want ErrUnknownQuestion", err)
	}
	if err := Reply(Place{Dir: filepath.Join(t.TempDir(), "missing")}, "q444", Allow); !errors.Is(err, ErrUnknownQuestion) {
		t.Errorf("Reply in a missing dir = %v, want ErrUnknownQuestion", err)
	}
	select {
	case r := <-res:
		t.Fatalf("a refused reply settled the question: %+v", r)
	default:
	}
	if len(b.Pending()) != 1 {
		t.Error("a refused reply removed the question")
	}
}

func TestReplyRefusesAnIDPendingInTwoProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b1, b2 := listen(t, dir), listen(t, dir)
	r1 := askAsync(b1, Question{ID: "q555"}, 0)
	r2 := askAsync(b2, Question{ID: "q555"}, 0)
	waitPending(t, b1, 1)
	waitPending(t, b2, 1)
	if err := Reply(Place{Dir: dir}, "q555", Allow); err == nil || !strings.Contains(err.Error(), "2 corvid processes") {
		t.Fatalf("Reply(ambiguous id) = %v, want an error naming both", err)
	}
	b1.Close()
	b2.Close()
	for _, r := range []asked{receive(t, r1), receive(t, r2)} {
		if r.answer != Deny {
			t.Errorf("ambiguous question settled as %q", r.answer)
		}
	}
}

func TestConcurrentAsksAreAnsweredIndependently(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := listen(t, dir)
	answers := []Answer{Allow, Always, Deny}
	const n = 12
	results := make([]<-chan asked, n)
	for i := range n {
		results[i] = askAsync(b, Question{Title: fmt.Sprint(i)}, 0)
	}
	qs := waitPending(t, b, n)
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for _, q := range qs {
		if seen[q.ID] {
			t.Fatalf("id %s given twice", q.ID)
		}
		seen[q.ID] = true
		var i int
		fmt.Sscan(q.Title, &i)
		wg.Go(func() {
			if err := Reply(Place{Dir: dir}, q.ID, answers[i%3]); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i, ch := range results {
		if r := receive(t, ch); r.answer != answers[i%3] || r.err != nil {
			t.Errorf("ask %d = %q, %v; want %q", i, r.answer, r.err, answers[i%3])
		}
	}
}

func TestAskRefusesAnIDAlreadyPending(t *testing.T) {
	t.Parallel()
	b := listen(t, t.TempDir())
	askAsync(b, Question{ID: "q666"}, 0)
	waitPending(t, b, 1)
	if a, err := b.Ask(context.Background(), Question{ID: "q666"}, 0); a != Deny || err == nil {
		t.Fatalf("second Ask with the same id = %q, %v; want deny and an error", a, err)
	}
}

func TestCloseDeniesPendingQuestionsAndRemovesTheSocket(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := listen(t, dir)
	res := askAsync(b, Question{Title: "pending at shutdown"}, 0)
	waitPending(t, b, 1)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if r := receive(t, res); r.answer != Deny || !errors.Is(r.err, ErrClosed) {
		t.Fatalf("Ask = %q, %v; want deny with ErrClosed", r.answer, r.err)
	}
	if _, err := os.Lstat(b.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket file survives Close: %v", err)
	}
	if a, err := b.Ask(context.Background(), Question{}, 0); a != Deny || !errors.Is(err, ErrClosed) {
		t.Errorf("Ask after Close = %q, %v; want deny with ErrClosed", a, err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if qs, err := List(Place{Dir: dir}); err != nil || len(qs) != 0 {
		t.Errorf("List after Close = %v, %v; want nothing", qs, err)
	}
}

func TestListenRefusesAPathTooLongForASocket(t *testing.T) {
	t.Parallel()
	if entrySuffix == ".addr" {
		t.Skip("the socket is abstract here: its name does not depend on the directory")
	}
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
	if _, err := Listen(Place{Dir: dir}, nil); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("Listen in a deep dir = %v, want a clear path-length error", err)
	}
}

func TestParseAnswer(t *testing.T) {
	for in, want := range map[string]Answer{"allow": Allow, " Always ": Always, "DENY": Deny} {
		if got, err := ParseAnswer(in); got != want || err != nil {
			t.Errorf("ParseAnswer(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "yes", "allow_once"} {
		if _, err := ParseAnswer(in); !errors.Is(err, ErrBadAnswer) {
			t.Errorf("ParseAnswer(%q) = %v, want ErrBadAnswer", in, err)
		}
	}
}

func TestBrokerRefusesPeersOfAnotherUser(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := listenAs(Place{Dir: dir}, nil, os.Getuid()+1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	res := askAsync(b, Question{ID: "q777"}, 0)
	waitPending(t, b, 1)
	qs, err := List(Place{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "permission denied") || len(qs) != 0 {
		t.Errorf("List as a stranger = %v, %v; want permission denied", qs, err)
	}
	if _, err := call(b.Path(), request{Op: opReply, ID: "q777", Answer: Allow}); err == nil {
		t.Error("a stranger's reply was accepted")
	}
	select {
	case r := <-res:
		t.Fatalf("a stranger settled the question: %+v", r)
	default:
	}
}

// A choice question is answered with one of its choices, by label (any
// case) or number; allow/always/deny and other text are refused and change
// nothing.
func TestChoiceQuestionsTakeAChoice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ reply, want string }{{"2", "SQLite"}, {" sqlite ", "SQLite"}, {"Postgres", "Postgres"}} {
		dir := t.TempDir()
		b := listen(t, dir)
		res := askAsync(b, Question{ID: "q666", Title: "Which database?", Choices: []string{"Postgres", "SQLite"}}, 0)
		waitPending(t, b, 1)
		for _, bad := range []string{"allow", "3", "0", "MySQL"} {
			if err := Reply(Place{Dir: dir}, "q666", Answer(bad)); !errors.Is(err, ErrBadChoice) {
				t.Errorf("Reply(%q) = %v, want ErrBadChoice", bad, err)
			}
		}
		if err := Reply(Place{Dir: dir}, "q666", Answer(tc.reply)); err != nil {
			t.Fatalf("Reply(%q) = %v", tc.reply, err)
		}
		if got := <-res; got.answer != Answer(tc.want) || got.err != nil {
			t.Errorf("Reply(%q): Ask got %q %v, want %q", tc.reply, got.answer, got.err, tc.want)
		}
	}
}

// A label that looks like a number is matched as a label first.
func TestChoiceLabelsWinOverNumbers(t *testing.T) {
	q := Question{Choices: []string{"2", "1"}}
	if a, err := q.ParseReply("1"); a != "1" || err != nil {
		t.Errorf("ParseReply(1) = %q %v, want the label 1", a, err)
	}
}

// A process this one started (a child, as a shell command is corvid's) is
// refused; the same request from this process itself is answered.
func TestBrokerRefusesAProcessItStarted(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the ancestry check is Linux only")
	}
	t.Parallel()
	dir := t.TempDir()
	b := listen(t, dir)
	res := askAsync(b, Question{ID: "q888"}, 0)
	waitPending(t, b, 1)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperReplyAllow$")
	cmd.Env = append(os.Environ(), "RESPOND_HELPER_DIR="+dir)
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "started by this corvid") {
		t.Errorf("the child's reply was not refused as a descendant's:\n%s", out)
	}
	select {
	case r := <-res:
		t.Fatalf("a child settled the question: %+v", r)
	default:
	}
	if qs, err := List(Place{Dir: dir}); err != nil || len(qs) != 1 {
		t.Errorf("List from the broker's own process = %v, %v", qs, err)
	}
}

// TestHelperReplyAllow is the child of TestBrokerRefusesAProcessItStarted.
func TestHelperReplyAllow(t *testing.T) {
	dir := os.Getenv("RESPOND_HELPER_DIR")
	if dir == "" {
		t.Skip("helper process only")
	}
	fmt.Println(Reply(Place{Dir: dir}, "q888", Allow))
}

func TestListenNeverFollowsALinkAtTheDirectory(t *testing.T) {
	t.Parallel()
	target := t.TempDir()
	if err := os.Chmod(target, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "run")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(Place{Dir: link}, nil); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Listen through a link = %v, want a refusal naming the link", err)
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("the link's target is now %v (%v), want 0755 untouched", fi.Mode().Perm(), err)
	}
}

// In a shared temporary directory each broker makes a fresh private
// directory; what others planted there is neither used nor listed.
func TestSharedTempGetsAFreshPrivateDirectoryPerBroker(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	planted := t.TempDir()
	if err := os.Chmod(planted, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{fmt.Sprintf("corvid-%d", os.Getuid()), sharedPrefix() + "1-planted"} {
		if err := os.Symlink(planted, filepath.Join(tmp, name)); err != nil {
			t.Fatal(err)
		}
	}
	p := Place{Dir: tmp, SharedTemp: true}
	b, err := Listen(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(b.Path())
	if filepath.Dir(dir) != tmp || !strings.HasPrefix(filepath.Base(dir), sharedPrefix()) {
		t.Fatalf("broker serves from %s, want a fresh %s* directory in %s", dir, sharedPrefix(), tmp)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("broker directory %v (%v), want a real 0700 directory", fi.Mode(), err)
	}
	askAsync(b, Question{ID: "q999"}, 0)
	waitPending(t, b, 1)
	if qs, err := List(p); err != nil || len(qs) != 1 || qs[0].ID != "q999" {
		t.Fatalf("List = %v, %v; want q999", qs, err)
	}
	if err := Reply(p, "q999", Deny); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the broker's directory survives Close: %v", err)
	}
	if fi, err := os.Stat(planted); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("the planted link's target is now %v (%v), want 0755", fi.Mode().Perm(), err)
	}
}

func TestListenRefusesADirectoryOfAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("making a directory another user owns needs root")
	}
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(Place{Dir: dir}, nil); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Errorf("Listen in another user's directory = %v, want a refusal", err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o777 {
		t.Errorf("the other user's directory is now %v (%v)", fi.Mode().Perm(), err)
	}
}
