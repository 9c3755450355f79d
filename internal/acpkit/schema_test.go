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

// TestSchemaMatchesShared holds the embedded copy to the official schema: the one the
// TypeScript SDK's npm package ships, in $ACP_SCHEMA_DIR (.ci/run fetches it with
// .ci/acp-schema.sh), and, when it is there, ../shared/acp-schema/v1 beside the module.
// Every source found must match; CI (CI=true) must find at least one.
func TestSchemaMatchesShared(t *testing.T) {
	sources := schemaSources(moduleRoot(t), os.Getenv("ACP_SCHEMA_DIR"))
	var found []string
	for _, dir := range sources {
		official, err := os.ReadFile(filepath.Join(dir, "schema.json"))
		if err != nil {
			continue
		}
		found = append(found, dir)
		if !bytes.Equal(official, schemaJSON) {
			t.Errorf("internal/acpkit/schema/v1/schema.json differs from %s/schema.json", dir)
		}
	}
	switch {
	case len(found) > 0:
		t.Logf("compared with %v", found)
	case os.Getenv("CI") == "true":
		t.Fatalf("CI=true but no official schema to compare with in %v: run `export ACP_SCHEMA_DIR=$(bash .ci/acp-schema.sh DIR)` (the TypeScript SDK's copy from npm), as .ci/run does", sources)
	default:
		t.Skipf("no official schema to compare the embedded copy with in %v; .ci/run fetches one", sources)
	}
}

// schemaSources lists where an official copy may be: $ACP_SCHEMA_DIR, then the
// shared folder beside the repository (optional).
func schemaSources(root, env string) []string {
	var dirs []string
	if env != "" {
		dirs = append(dirs, env)
	}
	return append(dirs, filepath.Join(root, "..", "shared", "acp-schema", "v1"))
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
