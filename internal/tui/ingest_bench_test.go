package tui

import (
	"encoding/json"
	"testing"
)

// BenchmarkIngestOneCharChunks: the model taking one-character
// agent_message_chunks in batches of 1,000 (as the agent's queue hands
// them over), drawing a frame per batch; reported per chunk.
func BenchmarkIngestOneCharChunks(b *testing.B) {
	raw, _ := json.Marshal(chunk("agent_message_chunk", "x"))
	m := testModel()
	m.width, m.height = 100, 30
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.update(updateMsg{sessionID: "s1", raw: raw})
		if i%1000 == 999 {
			_ = m.View()
			m.printQ = m.printQ[:0]
		}
	}
}
