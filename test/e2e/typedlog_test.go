package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	corvidstore "github.com/corvid-agent/corvid/internal/store"
	"github.com/corvid-agent/corvid/internal/testkit"
)

// A database the previous release wrote (store schema 2, tags as host _meta
// keys in each row; testdata/typedlog/README.md) is migrated by the built
// binary to typed rows, and its session/load replays exactly the frames
// that release replayed, in the default dialect and in CodeBuddy's. The
// migrated rows hold no host's key name.
func TestTypedLogReplaysARelease2DatabaseIdentically(t *testing.T) {
	t.Parallel()
	for _, variant := range []struct {
		name string
		args []string
	}{{"default", nil}, {"codebuddy", []string{"--compat", "codebuddy"}}} {
		t.Run(variant.name, func(t *testing.T) {
			t.Parallel()
			sh := newSharedHome(t, map[string]any{"responses": []any{}})
			if err := os.MkdirAll(sh.home, 0o700); err != nil {
				t.Fatal(err)
			}
			db, err := os.ReadFile("testdata/typedlog/v2.db")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(sh.dbPath(), db, 0o600); err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile("testdata/typedlog/v2.replay." + variant.name + ".json")
			if err != nil {
				t.Fatal(err)
			}
			s := sh.start(t, testkit.Zed(), variant.args...)
			var raws []json.RawMessage
			for _, u := range s.load(t, "sess_typed") {
				raws = append(raws, u.Raw)
			}
			got, _ := json.MarshalIndent(raws, "", " ")
			if !bytes.Equal(got, want) {
				t.Fatalf("replay of the migrated database:\n%s\nwant what release 2 replayed:\n%s", got, want)
			}
			// The settings' codeMode keys were renamed, not lost.
			var res struct {
				ConfigOptions []struct {
					ID           string `json:"id"`
					CurrentValue any    `json:"currentValue"`
				} `json:"configOptions"`
			}
			s.MustCall(s.ctx, "session/resume", map[string]any{"sessionId": "sess_typed", "cwd": s.workspace}, &res)
			codeMode := any(nil)
			for _, o := range res.ConfigOptions {
				if o.ID == "codeMode" {
					codeMode = o.CurrentValue
				}
			}
			if codeMode != "all" {
				t.Errorf("codeMode after the migration %v, want all (stored by release 2 under CodeBuddy's key)", codeMode)
			}
			s.Close()
			st, err := corvidstore.Open(sh.dbPath())
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			evs, err := st.Events(t.Context(), "sess_typed")
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]int{}
			for _, e := range evs {
				kinds[e.Kind]++
				for _, key := range []string{`"meta"`, "codebuddy.ai", "corvid.dev"} {
					if bytes.Contains(e.Payload, []byte(key)) {
						t.Errorf("migrated row %d (%s) still holds %s: %s", e.Seq, e.Kind, key, e.Payload)
					}
				}
			}
			ss, err := st.GetSession(t.Context(), "sess_typed")
			if err != nil || bytes.Contains(ss.Config, []byte("codebuddy.ai")) || !bytes.Contains(ss.Config, []byte(`"codeMode":"all"`)) {
				t.Errorf("migrated settings %s, %v", ss.Config, err)
			}
			if kinds["team_update"] != 3 || kinds["drain_started"] != 1 || kinds["drain_ended"] != 1 {
				t.Errorf("migrated kinds %v, want 3 team_update, 1 drain_started, 1 drain_ended", kinds)
			}
		})
	}
}
