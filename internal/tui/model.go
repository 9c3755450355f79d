package tui

import (
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/tuiargs"
)

// model is the TUI's state: the session as the agent reported it, the
// live region, the input, and whatever question or picker is open.
type model struct {
	opts   Options
	th     *theme
	ag     *agent
	width  int
	height int

	sessionID string
	ready     bool // a session is open
	failed    bool // opening the session failed
	replaying bool // session/load is replaying the transcript
	modes     *acp.SessionModeState
	config    []acp.SessionConfigOption
	commands  []acp.AvailableCommand
	st        status
	stLine    statusMemo // the status line as last drawn (view.go)

	live      []block
	tools     map[string]*toolCall
	plan      []acp.PlanEntry
	printQ    []string // lines for the scrollback, in order
	printing  int      // how many of printQ are being printed
	printDone int      // how many of those bubbletea has printed
	// holdPrints delays printing after a resize; printHeld says a retry
	// is scheduled; termSize reads the terminal's size.
	holdPrints time.Time
	printHeld  bool
	// paceUntil ends the anchored, one-part-a-frame printing that follows
	// a resize (paced); sized says the terminal's first size came (the
	// model starts at 80×24 until it does).
	paceUntil time.Time
	sized     bool
	// spill writes the further parts of a print with its first (spill.go);
	// spilled is how many lines the print in flight armed it with.
	spill    *spiller
	spilled  int
	termSize func() (int, int, error)
	// erase rewrites bubbletea's erases (resize.go); rewraps says how the
	// terminal re-wraps its rows when it narrows (rewrap.go); frames are the
	// last two views' rows, and frameWrites the count of writes when each
	// was made (drawnFrame).
	erase       *eraser
	rewraps     rewrapper
	frames      [2][]string
	frameWrites [2]int64
	// printSkipped says a part of the print in flight was dropped
	// (filterPrint), and the parts after it with it.
	printSkipped bool
	// writes counts the writes to the terminal (anchor.go); printWrites
	// is the count after the last print; anchorSeen and anchorFlip drive
	// the status line's last cell.
	writes      func() int64
	out         *outPipe // the terminal's writer (outpipe.go); nil when not a file
	printWrites int64
	printedOnce bool
	// fresh says nothing was printed yet but the blank line written
	// before the first frame (run.go, leaveTopRow).
	fresh      bool
	anchorSeen int64
	anchorFlip bool
	frameWaits int    // the retries since a print began waiting for a frame
	viewRows   [2]int // the heights of the last two views

	in      input
	running bool
	perm    *permissionMsg
	permSel int
	permQ   []permissionMsg
	form    *form // an open elicitation (form.go), and those behind it
	formQ   []*form
	picker  *picker
	// The @ finder: the workspace's files (listed once, on the first @),
	// the matches of the @word at the cursor and the selected one.
	files      []string
	filesAsked bool
	finder     *finder
	thoughts   thoughtState
	// Members' streams (member.go), by kind and name, in order of arrival.
	memberTexts map[string]*memberText
	memberOrder []string
	lastOutput  *shownOutput // the last finished shell call's output, for Ctrl+O
	clip        clipState    // Ctrl+V's reading of the clipboard (clippaste.go)
	gap         bool         // the turn has output: the next block starts after a blank line
	quitArm     bool         // Ctrl+C on an empty input once already
	quitting    bool
	gone        bool

	// send delivers messages to the program (agents started later, on a
	// reconnection, report through it).
	send func(any)
	// Attached to a daemon (connect.go): the connection is down
	// (offline), the next attempt waits backoff, attempts counts them;
	// rejoining says a session/load after a reconnection is replaying.
	offline   bool
	backoff   time.Duration
	attempts  int
	rejoining bool
	// rejoinHold holds the prints of a re-attach's replay, queued from
	// rejoinAt on, until the load answers (connect.go, holdRejoin).
	rejoinHold bool
	rejoinAt   int
	shown      shown
	// answeredBy names who answered a tool call's question elsewhere;
	// awaitingWho holds the titles of questions withdrawn before that
	// was known.
	answeredBy  map[string]string
	awaitingWho map[string]string
	// keys maps keystrokes to actions (tuiargs.Keymap).
	keys map[string]string
	// resend is a prompt the agent refused with auth_required, sent again
	// once after a login (relogin.go); quietLoad is the session a login's
	// restart loads again, whose replay is on the screen already.
	resend    *resend
	quietLoad string
}

// picker is a list to choose one item from (/model, /mode, /sessions).
type picker struct {
	title string
	items []pickItem
	sel   int
	pick  func(m *model, it pickItem) tea.Cmd
	// closed runs when Esc or Ctrl+C closes the picker without a pick.
	closed func(m *model)
}

type pickItem struct{ label, value, note string }

// resizeSettle is how long printing waits after a resize, for bubbletea's
// repaint at the new size.
const resizeSettle = 100 * time.Millisecond

// paceAfterResize is how long after a resize settled prints stay paced: one
// part, of at most the rows above the live region, a frame (anchor.go).
const paceAfterResize = time.Second

// Messages of the model's own commands.
type (
	printedMsg    struct{}
	printRetryMsg struct{}
	sessionMsg    struct {
		ag     *agent
		rejoin bool
		id     string
		modes  *acp.SessionModeState
		config []acp.SessionConfigOption
		loaded bool
		err    error
		// again: a login's restart loaded the open session again;
		// unloadable: the session it could not load (relogin.go).
		again      bool
		unloadable string
	}
	promptDoneMsg struct {
		stop      string
		err       error
		text      string // the prompt
		blocks    []acp.ContentBlock
		ag        *agent // the agent and session it went to
		sessionID string
	}
	configMsg struct {
		config []acp.SessionConfigOption
		err    error
	}
	modeSetMsg struct {
		mode string
		err  error
	}
	noteMsg     struct{ text string }
	filesMsg    struct{ files []string }
	sessionsMsg struct {
		list []acp.SessionInfo
		err  error
	}
)

func newModel(opts Options, th *theme) *model {
	keys := opts.Keys
	if keys == nil {
		keys, _ = tuiargs.Keymap(nil)
	}
	return &model{keys: keys, opts: opts, th: th, width: 80, height: 24, tools: map[string]*toolCall{},
		st: status{model: opts.ModelLabel, endpoint: opts.Endpoint}, shown: newShown(),
		answeredBy: map[string]string{}, awaitingWho: map[string]string{}}
}

func (m *model) Init() tea.Cmd {
	// A loaded session's transcript is replayed before session/load
	// answers: it goes to the scrollback, the user's prompts included.
	m.replaying = m.opts.Continue || m.opts.Resume != ""
	for _, n := range m.opts.Notes {
		m.printLines(m.th.warn.Render("! " + n))
	}
	cmds := []tea.Cmd{m.openSession(m.opts.Continue, m.opts.Resume)}
	if m.opts.Theme == "" && m.th.color {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	return tea.Batch(cmds...)
}

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	if m.ag != nil {
		_, wake := msg.(updatesMsg)
		for _, u := range m.ag.takeUpdates(wake) {
			m.update(u)
		}
	}
	switch msg := msg.(type) {
	case agentGoneMsg:
		if msg.ag != nil && msg.ag != m.ag {
			return m, nil // a relay replaced after a reconnection
		}
		if m.connected() && !m.quitting {
			return m, m.connectionLost(msg)
		}
		return m, m.agentGone(msg)
	case tea.KeyPressMsg:
		cmd = m.key(msg)
		if c := m.refreshFinder(); c != nil {
			cmd = tea.Batch(cmd, c)
		}
	case tea.PasteMsg:
		if m.form != nil {
			m.form.paste(msg.Content)
		} else if m.perm == nil && m.picker == nil {
			m.in.pasteText(msg.Content)
		}
	default:
		cmd = m.agentMsg(msg)
	}
	if m.quitting && m.printing == 0 && len(m.printQ) == 0 {
		m.outDirect(true) // bubbletea restores the terminal after its last writes
		return m, tea.Batch(cmd, tea.Quit)
	}
	return m, tea.Batch(cmd, m.printCmd())
}

// agentMsg handles what is not a key: sizes, prints, and the agent's
// messages and answers.
func (m *model) agentMsg(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg)
	case tea.BackgroundColorMsg:
		m.th = newTheme(msg.IsDark(), m.th.color)
	case printedMsg:
		m.printDequeue()
	case printRetryMsg:
		m.printHeld = false
	case updateMsg:
		m.update(msg)
	case permissionMsg:
		if m.perm == nil {
			m.perm, m.permSel = &msg, 0
		} else {
			m.permQ = append(m.permQ, msg)
		}
	case permissionDoneMsg:
		if m.connected() && !m.stale(msg.ag) && m.asked(msg.req) {
			m.answered(msg.req.ToolCall.ToolCallID, msg.by)
			m.answeredElsewhere(msg.req)
		}
		m.withdraw(msg.req)
	case reconnectMsg:
		cmd = m.reconnect()
	case elicitMsg:
		m.openForm(msg)
	case elicitDoneMsg:
		m.withdrawForm(msg.req)
	case sessionMsg:
		cmd = m.sessionOpened(msg)
	case promptDoneMsg:
		m.turnDone(msg)
	case configMsg, modeSetMsg:
		m.settingDone(msg)
	case noteMsg:
		m.printLines(msg.text)
	case sessionsMsg:
		m.openSessionPicker(msg)
	case filesMsg, editedMsg, clipboardMsg:
		m.inputMsg(msg) // editor.go
	case loginRanMsg, authDoneMsg:
		cmd = m.loginMsg(msg) // loginpick.go
	}
	return cmd
}

func (m *model) turnDone(msg promptDoneMsg) {
	m.running = false
	if m.ag != nil {
		m.ag.dropRunText()
	}
	var refused *acp.Error
	if m.connected() && errors.As(msg.err, &refused) && refused.Code == acp.CodeInvalidParams {
		m.shown.refused(msg.text) // transcript.go
	}
	if m.connected() && errors.Is(msg.err, acp.ErrClosed) {
		return // the connection dropped: connectionLost says so, and the turn goes on in the daemon
	}
	m.settle()
	switch {
	case msg.err != nil:
		m.printLines(m.th.fail.Render("✗ " + rpcMessage(msg.err)))
		defer m.turnRefused(msg) // relogin.go: a login first, then the prompt again
	case msg.stop == acp.StopCancelled:
		m.printLines(m.th.warn.Render("⊘ cancelled"))
	case msg.stop != "" && msg.stop != acp.StopEndTurn:
		m.printLines(m.th.warn.Render("⊘ stopped: " + strings.ReplaceAll(msg.stop, "_", " ")))
	}
	m.cancelQuestions()
}

// settingDone records the agent's answer to /model or a mode change.
func (m *model) settingDone(msg tea.Msg) {
	switch msg := msg.(type) {
	case configMsg:
		if msg.err != nil {
			m.printLines(m.th.fail.Render("✗ " + rpcMessage(msg.err)))
		} else if msg.config != nil {
			m.config = msg.config
			m.syncStatus()
		}
	case modeSetMsg:
		if msg.err != nil {
			m.printLines(m.th.fail.Render("✗ " + rpcMessage(msg.err)))
		} else if m.modes != nil {
			m.modes.CurrentModeID = msg.mode
			m.syncStatus()
		}
	}
}

func (m *model) update(u updateMsg) {
	if m.quietLoad != "" && u.sessionID == m.quietLoad && replayed(u) {
		return // the screen shows this transcript already (relogin.go)
	}
	if !m.replaying && !m.rejoining && m.sessionID != "" && u.sessionID != m.sessionID {
		return
	}
	if u.text != nil && !m.connected() {
		// Decoded on the agent's side (coalesce.go): not again here.
		m.applyContent(u.text.SessionUpdate, acp.ContentBlock{Type: "text", Text: u.text.Content.Text}, "", "")
		return
	}
	raw := u.rawUpdate()
	if m.connected() {
		if m.rejoining {
			m.holdRejoin() // connect.go
		}
		m.noteAnsweredBy(raw)
		var ok bool
		if raw, ok = m.shown.filter(raw, m.rejoining); !ok {
			return
		}
	}
	m.applyUpdate(raw)
}

// prompt sends text as a turn, with the clipboard's images attached.
func (m *model) prompt(text string, imgs ...clipImage) tea.Cmd {
	if !m.fresh || len(m.printQ) > 0 {
		m.printLines("") // fresh: the blank line above is on the screen already
	}
	m.fresh = false
	// Shown, not obeyed: a file name picked with @ is the repository's,
	// and a paste may come from anywhere (scrub.go). What is sent is text.
	lines := strings.Split(scrubText(text), "\n")
	shown := lines
	if len(lines) > pasteFoldLines {
		shown = append(append([]string{}, lines[:3]...), fmt.Sprintf("… %d more lines", len(lines)-3))
	}
	for i, l := range shown {
		mark := "  "
		if i == 0 {
			mark = m.th.accent.Render("› ")
		}
		m.printLines(wrapStyled(m.th.bold.Render(l), m.width, mark, "  ")...)
	}
	m.printLines("")
	// A prompt refused for a login is not sent after this one (relogin.go).
	m.resend = nil
	return m.startTurn(text, m.promptBlocks(text, imgs)) // attach.go
}

// cancel asks the agent to end the running turn; open questions are
// answered cancelled, as the protocol asks of a client.
func (m *model) cancel() tea.Cmd {
	m.cancelQuestions()
	switch {
	case m.running:
		m.st.note = "cancelling…"
	case !m.connected() || !m.ready || m.offline || m.sessionID == "":
		return nil
	default:
		// Attached to the daemon, a turn this TUI did not start (another
		// client's, or its own from before a reconnection) may be
		// running: the daemon cancels whichever runs, and a cancel of an
		// idle session does nothing.
	}
	ag, id := m.ag, m.sessionID
	return func() tea.Msg {
		_ = ag.conn.Notify("session/cancel", acp.SessionIDRequest{SessionID: id})
		return nil
	}
}

func (m *model) cancelQuestions() {
	if m.perm != nil {
		m.perm.reply <- ""
		m.perm = nil
	}
	for _, q := range m.permQ {
		q.reply <- ""
	}
	m.permQ = nil
	m.cancelForms()
	if !m.running {
		m.st.note = ""
	}
}

// answer replies to the open permission question with option i.
func (m *model) answer(i int) {
	p := m.perm
	if p == nil || i < 0 || i >= len(p.req.Options) {
		return
	}
	o := p.req.Options[i]
	p.reply <- o.OptionID
	verdict := m.th.ok.Render(o.Name)
	if strings.HasPrefix(o.Kind, "reject") {
		verdict = m.th.fail.Render(o.Name)
	}
	m.printLines(m.th.dim.Render("? ") + oneLine(p.req.ToolCall.Title) + m.th.dim.Render(" → ") + verdict)
	m.nextQuestion()
}

func (m *model) nextQuestion() {
	m.perm, m.permSel = nil, 0
	if len(m.permQ) > 0 {
		q := m.permQ[0]
		m.permQ = m.permQ[1:]
		m.perm = &q
	}
}

// asked tells whether req is the open question or one queued.
func (m *model) asked(req *acp.RequestPermissionRequest) bool {
	if m.perm != nil && m.perm.req == req {
		return true
	}
	for _, q := range m.permQ {
		if q.req == req {
			return true
		}
	}
	return false
}

func (m *model) withdraw(req *acp.RequestPermissionRequest) {
	if m.perm != nil && m.perm.req == req {
		m.nextQuestion()
		return
	}
	for i, q := range m.permQ {
		if q.req == req {
			m.permQ = append(m.permQ[:i], m.permQ[i+1:]...)
			return
		}
	}
}

func (m *model) agentGone(msg agentGoneMsg) tea.Cmd {
	if m.quitting {
		m.outDirect(true)
		return tea.Quit
	}
	m.gone = true
	m.running = false
	m.settle()
	text := "the agent exited"
	if msg.err != nil {
		text += " (" + msg.err.Error() + ")"
	}
	m.printLines("", m.th.fail.Render("✗ "+text))
	if msg.stderr != "" {
		lines := splitLines(msg.stderr)
		if len(lines) > 8 {
			lines = lines[len(lines)-8:]
		}
		for _, l := range lines {
			m.printLines(m.th.dim.Render("  " + l))
		}
	}
	m.cancelQuestions()
	m.quitting = true
	return m.printCmd()
}
