package agent

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/corvid-agent/corvid/internal/permission"
)

// Concurrent settings writes never leave the session holding what the
// store does not: whatever order they commit in, the last write taken is
// the one stored, with every other write's field kept.
func TestConcurrentSettingsWritesLeaveTheSessionAsStored(t *testing.T) {
	h := newHarness(t, permission.ModeDefault)
	modes := []string{"ask", "edit", "plan", "yolo"}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if err := h.s.SetMode(modes[i%len(modes)]); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := h.s.SetMultitask(i%2 == 0); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	meta, err := h.agent.st.GetSession(context.Background(), h.s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var sc storedControls
	if err := json.Unmarshal(meta.Config, &sc); err != nil {
		t.Fatal(err)
	}
	c := h.s.Controls()
	if meta.Mode != c.Mode || sc.Multitask != c.Multitask {
		t.Errorf("the session holds mode %s, multitask %v; the store mode %s, multitask %v", c.Mode, c.Multitask, meta.Mode, sc.Multitask)
	}
}
