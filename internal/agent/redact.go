package agent

import (
	"slices"
	"strings"

	"github.com/corvid-agent/corvid/internal/tool"
)

// minSecretLen keeps short values (an empty or toy key) from redacting
// ordinary words.
const minSecretLen = 8

// redactedMark replaces a known secret in tool output.
const redactedMark = "[REDACTED]"

// redactor replaces known secret values (provider keys) in tool output
// before it reaches a frame, the store or the model.
type redactor struct {
	r *strings.Replacer // nil: nothing to redact
}

func newRedactor(secrets []string) redactor {
	var keep []string
	for _, s := range secrets {
		s = strings.TrimSpace(s)
		if len(s) >= minSecretLen && !slices.Contains(keep, s) {
			keep = append(keep, s)
		}
	}
	if len(keep) == 0 {
		return redactor{}
	}
	// Longest first, so a key that contains another is replaced whole.
	slices.SortFunc(keep, func(a, b string) int { return len(b) - len(a) })
	var pairs []string
	for _, s := range keep {
		pairs = append(pairs, s, redactedMark)
	}
	return redactor{r: strings.NewReplacer(pairs...)}
}

// holds reports whether s contains a known secret.
func (r redactor) holds(s string) bool { return r.r != nil && s != "" && r.r.Replace(s) != s }

func (r redactor) text(s string) string {
	if r.r == nil || s == "" {
		return s
	}
	return r.r.Replace(s)
}

func (r redactor) content(cs []tool.Content) []tool.Content {
	if r.r == nil || len(cs) == 0 {
		return cs
	}
	out := make([]tool.Content, len(cs))
	for i, c := range cs {
		c.Text = r.text(c.Text)
		c.NewText = r.text(c.NewText)
		if c.OldText != nil {
			old := r.text(*c.OldText)
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
