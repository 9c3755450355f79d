package tuiargs

import (
	"slices"
	"testing"
)

func TestForwardAndACPArgs(t *testing.T) {
	f := Flags{Model: "script:x.json", Agent: "rev", Yolo: true, Allow: []string{"write", "shell(go test*)"},
		Sandbox: "read-only", Resume: "s1", Theme: "light"}
	want := []string{"acp", "--log-level", "warn", "--model", "script:x.json", "--agent", "rev", "--yolo",
		"--allow", "write", "--allow", "shell(go test*)", "--sandbox", "read-only"}
	if got := f.ACPArgs(); !slices.Equal(got, want) {
		t.Errorf("ACPArgs = %q, want %q", got, want)
	}
	fwd := append(want[3:], "--resume", "s1", "--theme", "light")
	if got := f.Forward(); !slices.Equal(got, fwd) {
		t.Errorf("Forward = %q, want %q", got, fwd)
	}
	if (&Flags{Continue: true, Resume: "x"}).Validate() == nil {
		t.Error("--continue with --resume was accepted")
	}
}
