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

func TestConnectGoesToTheRelayAndIsForwarded(t *testing.T) {
	f := Flags{Model: "script:x.json", Connect: "unix:/s.sock", Session: "sess_1", TokenFile: "/t"}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	want := []string{"acp", "--log-level", "warn", "--model", "script:x.json", "--connect", "unix:/s.sock", "--connect-token-file", "/t"}
	if got := f.ACPArgs(); !slices.Equal(got, want) {
		t.Errorf("ACPArgs = %q, want %q", got, want)
	}
	fwd := []string{"--model", "script:x.json", "--connect", "unix:/s.sock", "--session", "sess_1", "--connect-token-file", "/t"}
	if got := f.Forward(); !slices.Equal(got, fwd) {
		t.Errorf("Forward = %q, want %q", got, fwd)
	}
	for _, bad := range []Flags{{Session: "s"}, {TokenFile: "t"}, {Connect: "auto", Command: []string{"x"}}, {Connect: "auto", Resume: "s"}} {
		if bad.Validate() == nil {
			t.Errorf("%+v was accepted", bad)
		}
	}
}
