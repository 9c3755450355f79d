package acpkit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestMethodTablesComeFromTheSchema(t *testing.T) {
	s, err := LoadSchema()
	if err != nil {
		t.Fatal(err)
	}
	want := map[Role]map[string]string{
		AgentParams: {"initialize": "InitializeRequest", "session/prompt": "PromptRequest"},
		AgentResult: {
			"initialize": "InitializeResponse", "session/new": "NewSessionResponse",
			"session/load": "LoadSessionResponse", "session/prompt": "PromptResponse",
			"session/list": "ListSessionsResponse", "session/set_config_option": "SetSessionConfigOptionResponse",
		},
		ClientParams: {
			"session/request_permission": "RequestPermissionRequest", "fs/read_text_file": "ReadTextFileRequest",
			"fs/write_text_file": "WriteTextFileRequest", "terminal/create": "CreateTerminalRequest",
			"terminal/output": "TerminalOutputRequest", "terminal/wait_for_exit": "WaitForTerminalExitRequest",
			"terminal/kill": "KillTerminalRequest", "terminal/release": "ReleaseTerminalRequest",
			"elicitation/create": "CreateElicitationRequest",
		},
		ClientResult:      {"session/request_permission": "RequestPermissionResponse", "fs/read_text_file": "ReadTextFileResponse"},
		AgentNotification: {"session/update": "SessionNotification", "$/cancel_request": "CancelRequestNotification"},
	}
	for role, methods := range want {
		for method, def := range methods {
			if got := s.Def(role, method); got != def {
				t.Errorf("Def(%d, %s) = %q, want %s", role, method, got, def)
			}
		}
	}
	// session/cancel is a client→agent notification: never one the agent may send.
	if got := s.Def(AgentNotification, "session/cancel"); got != "" {
		t.Errorf("session/cancel listed as an agent notification (%s)", got)
	}
	if n := len(s.Methods(ClientParams)); n != 9 {
		t.Errorf("%d agent→client request methods, want the schema's 9: %v", n, s.Methods(ClientParams))
	}
	if !s.HasProperty("InitializeResponse", "agentCapabilities") || s.HasProperty("InitializeResponse", "zz") {
		t.Error("HasProperty does not read the schema's properties")
	}
}

func TestValidate(t *testing.T) {
	if err := Validate("PromptResponse", []byte(`{"stopReason":"end_turn"}`)); err != nil {
		t.Error(err)
	}
	if err := Validate("PromptResponse", []byte(`{"stopReason":"finished"}`)); err == nil {
		t.Error("an invalid stopReason validated")
	}
	if err := Validate("PromptResponse", nil); err == nil {
		t.Error("an absent result validated as a PromptResponse")
	}
}

// TestSchemaMatchesShared holds the embedded copy to the project's official schema,
// ../shared/acp-schema/v1 beside the module (or $ACP_SCHEMA_DIR). CI (CI=true) must have it.
func TestSchemaMatchesShared(t *testing.T) {
	dir := os.Getenv("ACP_SCHEMA_DIR")
	if dir == "" {
		dir = filepath.Join(moduleRoot(t), "..", "shared", "acp-schema", "v1")
	}
	shared, err := os.ReadFile(filepath.Join(dir, "schema.json"))
	switch {
	case err != nil && os.Getenv("CI") == "true":
		t.Fatalf("CI=true but the official schema is not there to compare with: %v (check out the shared folder beside the repository or set ACP_SCHEMA_DIR)", err)
	case err != nil:
		t.Skipf("no official schema to compare the embedded copy with (%v); this check runs in CI", err)
	}
	if !bytes.Equal(shared, schemaJSON) {
		t.Errorf("internal/acpkit/schema/v1/schema.json differs from %s/schema.json", dir)
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the package")
		}
		dir = parent
	}
}
