package agent

import (
	"slices"
	"strings"
	"sync"

	"github.com/corvid-agent/corvid/internal/tool"
)

// minSecretLen keeps short values (an empty or toy key) from redacting
// ordinary words.
const minSecretLen = 8

// redactedMark replaces a known secret in tool output.
const redactedMark = "[REDACTED]"

// redactor replaces known secret values (provider keys) in tool output
// before it reaches a frame, the store or the model. Besides the values it
// was made with it learns values later: those add gives (the header values
// of MCP servers an editor declares) and those more returns
// (Config.MoreSecrets: a key first read from the OS keyring when a session
// switches models). more's list only grows, so its new values are the
// ones past the length last seen.
type redactor struct {
	more func() []string

	mu    sync.Mutex
	known []string
	seen  int               // len(more()) already in known
	r     *strings.Replacer // nil: nothing to redact
}

func newRedactor(secrets []string, more func() []string) *redactor {
	return &redactor{more: more, known: slices.Clone(secrets), r: replacerOf(secrets)}
}

// add makes values secrets from now on.
func (rd *redactor) add(values ...string) {
	if len(values) == 0 {
		return
	}
	rd.mu.Lock()
	defer rd.mu.Unlock()
	rd.known = append(rd.known, values...)
	rd.r = replacerOf(rd.known)
}

// replacer is the current replacer, rebuilt when more has grown. more is
// called before rd.mu is taken: no two locks are held at once.
func (rd *redactor) replacer() *strings.Replacer {
	var m []string
	if rd.more != nil {
		m = rd.more()
	}
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if len(m) > rd.seen {
		rd.known = append(rd.known, m[rd.seen:]...)
		rd.seen = len(m)
		rd.r = replacerOf(rd.known)
	}
	return rd.r
}

func replacerOf(secrets []string) *strings.Replacer {
	var keep []string
	for _, s := range secrets {
		s = strings.TrimSpace(s)
		if len(s) >= minSecretLen && !slices.Contains(keep, s) {
			keep = append(keep, s)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	// Longest first, so a key that contains another is replaced whole.
	slices.SortFunc(keep, func(a, b string) int { return len(b) - len(a) })
	var pairs []string
	for _, s := range keep {
		pairs = append(pairs, s, redactedMark)
	}
	return strings.NewReplacer(pairs...)
}

// holds reports whether s contains a known secret.
func (rd *redactor) holds(s string) bool {
	r := rd.replacer()
	return r != nil && s != "" && r.Replace(s) != s
}

func (rd *redactor) text(s string) string {
	if s == "" {
		return s
	}
	if r := rd.replacer(); r != nil {
		return r.Replace(s)
	}
	return s
}

func (rd *redactor) content(cs []tool.Content) []tool.Content {
	if len(cs) == 0 || rd.replacer() == nil {
		return cs
	}
	out := make([]tool.Content, len(cs))
	for i, c := range cs {
		c.Text = rd.text(c.Text)
		c.NewText = rd.text(c.NewText)
		if c.OldText != nil {
			old := rd.text(*c.OldText)
			c.OldText = &old
		}
		out[i] = c
	}
	return out
}

// pastedSecretNotice tells the user that a prompt held a configured key.
const pastedSecretNotice = "[corvid] Your prompt contains a configured API key or header token. " +
	"Prompts are not redacted: it is stored in this session and was sent to the model. " +
	"Remove the session (`corvid sessions rm`) and rotate the key if that was not meant."

// warnPastedSecret tells the user, in the conversation and the log, when
// the turn's prompt holds a value the redactor knows: tool output is
// redacted, but a prompt goes to the store and the model as typed
// (docs/security.md).
func (t *Turn) warnPastedSecret() {
	for i := range t.blocks {
		if t.s.agent.redact.holds(t.blocks[i].text()) {
			t.s.agent.cfg.Logger.Warn("a prompt contains a configured key; it is stored and sent as typed", "session", t.s.ID)
			t.s.Notify(pastedSecretNotice)
			return
		}
	}
}
