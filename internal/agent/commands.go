package agent

import (
	"context"
	"fmt"

	"github.com/corvid-agent/corvid/internal/commands"
	"github.com/corvid-agent/corvid/internal/llm"
)

// CommandInfo is a slash command as the editor's "/" menu shows it.
type CommandInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Hint        string `json:"hint,omitempty"`
}

// PromptSource supplies extra commands that expand to prompt text, such as
// MCP prompts ("server:prompt").
type PromptSource interface {
	Commands() []CommandInfo
	Expand(ctx context.Context, name, args string) (text string, ok bool, err error)
}

// expandCommand turns a slash command prompt into what the turn does. It
// returns handled=true when the command was executed without the model.
func (t *Turn) expandCommand(blocks []Block) (out []Block, handled bool, stop StopReason, err error) {
	if len(blocks) == 0 || blocks[0].Type != BlockText {
		return blocks, false, "", nil
	}
	name, args, ok := commands.Parse(blocks[0].Text)
	if !ok {
		return blocks, false, "", nil
	}
	s := t.s
	replace := func(text string) []Block {
		out := append([]Block{{Type: BlockText, Text: text}}, blocks[1:]...)
		return out
	}
	if b, ok := commands.LookupBuiltin(name); ok {
		prompt, err := b.Run(commandHost{t}, args)
		switch {
		case err != nil && t.ctx.Err() != nil:
			return nil, true, StopCancelled, nil
		case err != nil:
			return nil, true, "", err
		case prompt == "":
			return nil, true, StopEndTurn, nil
		}
		return replace(prompt), false, "", nil
	}
	v := s.toolbox.view()
	custom, src := v.custom, v.prompts
	for _, c := range custom {
		if c.Name == name {
			return replace(commands.Expand(c, args)), false, "", nil
		}
	}
	if src != nil {
		text, ok, err := src.Expand(t.ctx, name, args)
		if err != nil {
			t.say(fmt.Sprintf("/%s failed: %v", name, err))
			return nil, true, StopEndTurn, nil
		}
		if ok {
			return replace(text), false, "", nil
		}
	}
	return blocks, false, "", nil // not a command: send the text as written
}

// commandHost is the turn a built-in command runs in.
type commandHost struct{ t *Turn }

func (h commandHost) Say(text string) { h.t.say(text) }
func (h commandHost) ClearContext() {
	h.t.s.conv.resetHistory(func([]llm.Message) []llm.Message { return nil })
}
func (h commandHost) Compact(focus string) error { return h.t.compact(focus, true) }
func (h commandHost) Cwd() string                { return h.t.s.env.Cwd }

func (h commandHost) Usage() commands.Usage {
	s := h.t.s
	v := s.settings.view()
	st := s.conv.stats()
	return commands.Usage{Model: v.model.Info().ID, ContextUsed: st.ContextUsed, ContextWindow: v.window,
		Turns: st.Turns, Tokens: st.Tokens, CostUSD: st.CostUSD, CostKnown: st.CostKnown}
}

func (h commandHost) Menu() ([]commands.Command, []commands.Skill) {
	s := h.t.s
	var cmds []commands.Command
	for _, c := range s.Commands() {
		cmds = append(cmds, commands.Command{Name: c.Name, Description: c.Description, ArgumentHint: c.Hint})
	}
	return cmds, s.toolbox.view().skills
}
