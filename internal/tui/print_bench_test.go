package tui

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// noInit is the model without its Init (which opens a session).
type noInit struct{ *model }

func (n noInit) Init() tea.Cmd { return nil }
func (n noInit) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := n.model.Update(msg)
	return n, cmd
}

// tailWriter waits for a marker in what is written to it.
type tailWriter struct {
	mu   sync.Mutex
	tail []byte
	n    int
	want []byte
	seen chan struct{}
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n += len(p)
	w.tail = append(w.tail[max(0, len(w.tail)-64):], p...)
	if w.seen != nil && bytes.Contains(w.tail, w.want) {
		close(w.seen)
		w.seen = nil
	}
	return len(p), nil
}

// BenchmarkPrintTenMB: a 10 MB answer (100,000 lines, 4 KiB chunks) from
// the model's updates to bubbletea's output, in process (no terminal):
// the TUI's own share of the TenMBAnswer benchmark of test/tui.
func BenchmarkPrintTenMB(b *testing.B) {
	line := strings.Repeat("0123456789", 9) + "lorem ips\n"
	text := strings.Repeat(line, 100000) + "END-OF-ANSWER\n"
	// raw: the model decodes each chunk; decoded: the agent's side has
	// (coalesce.go).
	for _, decoded := range []bool{false, true} {
		b.Run(map[bool]string{false: "raw", true: "decoded"}[decoded], func(b *testing.B) {
			printTenMB(b, text, decoded)
		})
	}
}

func printTenMB(b *testing.B, text string, decoded bool) {
	var ups []updateMsg
	for i := 0; i < len(text); i += 4096 {
		t := text[i:min(i+4096, len(text))]
		r, _ := json.Marshal(chunk("agent_message_chunk", t))
		u := updateMsg{sessionID: "s1", raw: r}
		if decoded {
			c := textChunk{SessionUpdate: "agent_message_chunk"}
			c.Content.Type, c.Content.Text = "text", t
			u.text = &c
		}
		ups = append(ups, u)
	}
	for i := 0; i < b.N; i++ {
		m := testModel()
		m.width, m.height = 100, 30
		w := &tailWriter{want: []byte("END-OF-ANSWER"), seen: make(chan struct{})}
		seen := w.seen
		out := m.output(w) // as Run's (anchor.go)
		p := tea.NewProgram(noInit{m}, tea.WithInput(nil), tea.WithOutput(out), tea.WithWindowSize(100, 30),
			tea.WithFilter(printFilter(m)))
		done := make(chan struct{})
		go func() { _, _ = p.Run(); close(done) }()
		for _, u := range ups {
			p.Send(u)
		}
		p.Send(promptDoneMsg{stop: "end_turn"})
		<-seen
		p.Quit()
		<-done
	}
}
