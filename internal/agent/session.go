package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/corvid-agent/corvid/internal/commands"
	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/mcp"
	"github.com/corvid-agent/corvid/internal/permission"
	"github.com/corvid-agent/corvid/internal/store"
	"github.com/corvid-agent/corvid/internal/tool"
)

// ErrBusy is returned when a prompt arrives while a live, uncancelled turn
// is running in the same session.
var ErrBusy = errors.New("a turn is already running in this session; cancel it or wait for it to end")

// windDown bounds how long a new prompt waits for a cancelled turn to end.
const windDown = 5 * time.Second

// Session is one conversation.
type Session struct {
	ID    string
	agent *Agent
	front FrontEnd
	tools *tool.Registry
	env   tool.Env

	store *store.Store // nil: not persisted

	mu      sync.Mutex
	history []llm.Message
	turn    *Turn
	turns   int
	memory  *permission.Memory // "always" answers
	perms   Permissions        // from the session's project config and the launch flags
	mcpCfg  []mcp.Server       // configured MCP servers of the session's project
	mode    permission.Mode
	model   llm.Model
	thought string       // thought level id
	profile *ProfileInfo // the agent profile the session was created with
	// windowTier is the selected context tier (0: the model's window).
	windowTier int64
	cost       float64 // cumulative USD
	lastUsed   int64   // tokens in context after the last response

	system      string // the system prompt (base + project instructions + env)
	custom      []commands.Command
	skills      []commands.Skill
	prompts     PromptSource
	stopWatch   func()
	mcp         *mcp.Manager
	notices     []string
	extra       string  // Config.SessionContext's text, set once at start
	finalOutput *string // submit_output's submission in the running turn
	// noticesTaken: the editor took the start notices; later ones go to
	// the conversation.
	noticesTaken bool
	toolIDs      map[string]bool // tool call ids used in this session
	knownSeq     atomic.Int64    // the stored log's last seq, as far as this process knows
}

// Cwd is the session's working directory.
func (s *Session) Cwd() string { return s.env.Cwd }

// Turn is one prompt being answered.
type Turn struct {
	s         *Session
	ctx       context.Context
	cancel    context.CancelFunc
	done      chan struct{}
	prev      *Turn
	blocks    []Block
	cancelled bool   // guarded by s.mu
	release   func() // the store lease held while the turn runs
	storeMark uint64 // the store's failed commits when the turn began
}

// StartTurn registers a turn for blocks. It is quick and must be called in
// the order prompts arrived, so that a cancel right behind it finds it. Run
// does the work.
func (s *Session) StartTurn(blocks []Block) (*Turn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var prev *Turn
	if t := s.turn; t != nil {
		select {
		case <-t.done:
		default:
			if !t.cancelled {
				return nil, ErrBusy
			}
			prev = t
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &Turn{s: s, ctx: ctx, cancel: cancel, done: make(chan struct{}), prev: prev, blocks: blocks}
	s.turn = t
	return t, nil
}

// Cancel stops the running turn, if any. Cancelling an idle session does
// nothing.
func (s *Session) Cancel() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.turn; t != nil {
		t.cancelled = true
		t.cancel()
		for p := t.prev; p != nil; p = p.prev {
			p.cancel()
		}
	}
}

// Close cancels any turn, waits (bounded) for it to end, and frees the
// session's runtime resources (its terminals and their processes).
func (s *Session) Close() {
	s.mu.Lock()
	t := s.turn
	s.mu.Unlock()
	s.Cancel()
	if t != nil {
		select {
		case <-t.done:
		case <-time.After(windDown):
		}
	}
	if c, ok := s.env.Terminals.(io.Closer); ok {
		_ = c.Close()
	}
	s.mu.Lock()
	stop := s.stopWatch
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	s.mu.Lock()
	mgr := s.mcp
	s.mu.Unlock()
	if mgr != nil {
		_ = mgr.Close()
	}
	s.flush()
}

// StopReason is why a turn ended (ACP's values).
type StopReason string

const (
	StopEndTurn         StopReason = "end_turn"
	StopMaxTokens       StopReason = "max_tokens"
	StopMaxTurnRequests StopReason = "max_turn_requests"
	StopRefusal         StopReason = "refusal"
	StopCancelled       StopReason = "cancelled"
)

// Run answers the turn's prompt. Every event of the turn has been emitted
// when it returns. A cancelled turn returns StopCancelled and no error; a
// model failure returns the error (an *llm.Error is safe to show).
func (t *Turn) Run() (StopReason, error) {
	s := t.s
	defer func() {
		t.cancel()
		s.flush()
		if t.release != nil {
			t.release()
		}
		close(t.done)
	}()
	if t.prev != nil {
		select {
		case <-t.prev.done:
		case <-time.After(windDown):
			return "", ErrBusy
		case <-t.ctx.Done():
			return StopCancelled, nil
		}
	}
	if t.ctx.Err() != nil {
		return StopCancelled, nil
	}
	var err error
	if t.release, err = s.acquire(); err != nil {
		return "", err
	}
	t.storeMark = s.storeFailures()
	if err := s.syncWithStore(); err != nil {
		return "", err
	}
	s.recordPrompt(t.blocks)
	s.awaitMCP(t.ctx)
	if t.ctx.Err() != nil {
		return StopCancelled, nil
	}
	s.mu.Lock()
	s.turns++
	first := s.turns == 1
	s.mu.Unlock()
	blocks, handled, stop, err := t.expandCommand(t.blocks)
	if handled {
		return stop, err
	}
	user, err := s.userMessage(t.ctx, blocks)
	if err != nil {
		if t.ctx.Err() != nil {
			return StopCancelled, nil
		}
		return "", err
	}
	s.mu.Lock()
	mark := len(s.history)
	s.mu.Unlock()
	s.appendHistory(user)

	s.takeFinalOutput() // a submission belongs to the turn that made it
	stop, err = t.loop()
	if err == nil && stop != StopCancelled && stop != StopRefusal {
		t.emitFinalOutput()
	}
	if err == nil {
		// The answer goes out only once the turn's events are stored.
		s.flush()
		if ferr := t.storeFault(); ferr != nil {
			stop, err = "", ferr
		}
	}
	if stop == StopRefusal {
		// The refused prompt and everything after it leave the context.
		s.resetHistory(func(h []llm.Message) []llm.Message { return h[:mark] })
	}
	if err == nil && first && stop != StopRefusal {
		s.setTitle(titleFrom(t.blocks))
	}
	return stop, err
}

// userMessage converts prompt blocks into the model's user message.
func (s *Session) userMessage(ctx context.Context, blocks []Block) (llm.Message, error) {
	msg := llm.Message{Role: llm.RoleUser}
	for _, b := range blocks {
		switch b.Type {
		case BlockText:
			msg.Parts = append(msg.Parts, llm.Text(b.Text))
		case BlockImage:
			msg.Parts = append(msg.Parts, llm.Part{Type: llm.PartImage, MimeType: b.MimeType, Data: b.Data})
		case BlockResource:
			if b.Blob {
				msg.Parts = append(msg.Parts, llm.Text(fmt.Sprintf("<resource uri=%q mimeType=%q>(binary, %d bytes)</resource>", b.URI, b.MimeType, len(b.Data))))
			} else {
				msg.Parts = append(msg.Parts, llm.Text(fmt.Sprintf("<resource uri=%q>\n%s\n</resource>", b.URI, b.Text)))
			}
		case BlockResourceLink:
			msg.Parts = append(msg.Parts, llm.Text(s.resolveLink(ctx, b)))
		case BlockAudio:
			msg.Parts = append(msg.Parts, llm.Text(fmt.Sprintf("(audio attachment %s, %d bytes, not supported by this model)", b.MimeType, len(b.Data))))
		}
	}
	if len(msg.Parts) == 0 {
		msg.Parts = append(msg.Parts, llm.Text(""))
	}
	return msg, nil
}

// maxLinkBytes bounds a file pulled into context by a resource link.
const maxLinkBytes = 256 << 10

func (s *Session) resolveLink(ctx context.Context, b Block) string {
	path, ok := filePath(b.URI)
	if !ok {
		return s.resolveMCPLink(ctx, b)
	}
	// A link to a FIFO or device is refused before anything opens it; a
	// large file is read only as far as the context takes.
	var text string
	var err error
	if st, statErr := os.Stat(path); statErr == nil && (!st.Mode().IsRegular() || st.Size() > maxLinkBytes) {
		var head []byte
		var size int64
		head, size, err = tool.ReadPrefix(path, maxLinkBytes)
		text = string(head)
		if err == nil && size > maxLinkBytes {
			text = strings.ToValidUTF8(text, "") + fmt.Sprintf("\n… (truncated: %d more bytes)", size-maxLinkBytes)
		}
	} else {
		text, err = s.env.FS.ReadTextFile(ctx, path)
		if len(text) > maxLinkBytes {
			text = text[:maxLinkBytes] + "\n… (truncated)"
		}
	}
	if err != nil {
		return fmt.Sprintf("<resource_link uri=%q name=%q error=%q/>", b.URI, b.Name, err.Error())
	}
	return fmt.Sprintf("<file path=%q>\n%s\n</file>", path, text)
}

func titleFrom(blocks []Block) string {
	for _, b := range blocks {
		if b.Type == BlockText && b.Text != "" {
			return shorten(b.Text, 80)
		}
	}
	return "New session"
}
