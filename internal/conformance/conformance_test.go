package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func runKit(t *testing.T, opts Options) *Report {
	t.Helper()
	rep, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	_ = rep.WriteTable(&buf)
	t.Logf("\n%s", buf.String())
	return rep
}

// TestCorvidPassesEveryRequiredCheck runs the whole kit against the built corvid,
// scripted, and wants every MANDATORY and advertised CAPABILITY requirement to pass.
func TestCorvidPassesEveryRequiredCheck(t *testing.T) {
	bin := testkit.BuildCorvid(t)
	rep := runKit(t, Options{Agent: []string{bin, "acp"}, Scripted: true})
	for _, res := range rep.Results {
		if res.Status == Fail && (res.Tier == Mandatory || res.Tier == Capability) {
			b, _ := json.MarshalIndent(res.Transcript, "", " ")
			t.Errorf("%s %s: %s\n%s", res.Tier, res.ID, res.Detail, b)
		}
	}
	// The scripted model makes every turn possible: nothing that needs one may be skipped.
	for _, id := range []string{"prompt.stop-reason", "prompt.updates-before-response", "prompt.cancel",
		"prompt.cancel-race", "prompt.concurrent", "client-capabilities.none-used", "sessions.load",
		"sessions.new-distinct", "content.resource-link", "config.options", "schema.messages"} {
		if res, _ := rep.Get(id); res.Status == Skipped {
			t.Errorf("%s skipped against scripted corvid: %s", id, res.Detail)
		}
	}
	if !rep.OK() {
		t.Error("report is not OK")
	}
	if os.Getenv("CONFORMANCE_REPORT") != "" {
		_ = rep.WriteJSON(os.Getenv("CONFORMANCE_REPORT"))
	}
}

// TestBrokenAgentFails runs the kit against testdata/badagent, whose every fault
// must turn the matching requirement to FAIL: a checker that cannot fail is a defect.
func TestBrokenAgentFails(t *testing.T) {
	bin := testkit.BuildPackage(t, "./internal/conformance/testdata/badagent")
	rep := runKit(t, Options{Agent: []string{bin}, Timeout: 5 * time.Second})
	for _, id := range []string{
		"stdio.jsonrpc-lines",                  // log line on stdout
		"stdio.quiet-before-input",             // …written at start-up
		"stdio.exit-on-eof",                    // never exits
		"envelope.no-response-to-notification", // answers notifications
		"envelope.parse-error",                 // ignores bad JSON
		"envelope.method-not-found",            // unknown methods succeed
		"envelope.ext-method-not-found",
		"initialize.version-negotiation", // echoes 65535
		"initialize.agent-info",
		"initialize.authenticate-unknown",
		"sessions.new-distinct",
		"prompt.updates-before-response",
		"prompt.cancel",
		"client-capabilities.none-used",
		"schema.messages",
	} {
		res, ok := rep.Get(id)
		if !ok || res.Status != Fail {
			t.Errorf("%s: want FAIL against the broken agent, got %s (%s)", id, res.Status, res.Detail)
		}
		if ok && len(res.Transcript) == 0 {
			t.Errorf("%s: a failure must carry its transcript", id)
		}
	}
	if rep.OK() {
		t.Error("the broken agent's report is OK")
	}
}
