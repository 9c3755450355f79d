package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

func TestRelayDeclaresTheDialectInInitializeOnly(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"_meta":{"x":1}}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}` + "\n"
	b, err := io.ReadAll(declareDialect(strings.NewReader(in), "codebuddy"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"_meta":{"corvid.dev/dialect":"codebuddy","x":1}`) ||
		lines[1] != `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}` {
		t.Fatalf("relayed:\n%s", b)
	}
	for _, keep := range []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"_meta":{"corvid.dev/dialect":"acp"}}}` + "\n",
		`{"jsonrpc":"2.0","id":0,"method":"session/new","params":{}}` + "\n",
		"not json\n",
		`{"jsonrpc":"2.0","id":0,"method":"initialize"}`, // no newline yet: EOF
	} {
		b, err := io.ReadAll(declareDialect(strings.NewReader(keep), "codebuddy"))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != keep && !strings.Contains(keep, `"method":"initialize"}`) {
			t.Errorf("changed %q to %q", keep, b)
		}
	}
}

func TestDaemonArgsLeaveTheDialectToEachConnection(t *testing.T) {
	got := daemonArgs([]string{"acp", "-m", "x", "--compat", "codebuddy", "--connect", "auto", "--compat=codebuddy", "--yolo"})
	if want := []string{"-m", "x", "--yolo"}; !slices.Equal(got, want) {
		t.Fatalf("daemonArgs = %v, want %v", got, want)
	}
}
