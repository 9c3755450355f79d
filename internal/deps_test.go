// Package internal_test guards the architecture: the import arrows of
// ARCHITECTURE.md §1 point down, and each SDK stays in its own package; these
// tests fail when an import breaks that.
package internal_test

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const mod = "github.com/corvid-agent/corvid/"

type pkgInfo struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func listPackages(t *testing.T) map[string]pkgInfo {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", mod+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]pkgInfo{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkgInfo
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs[strings.TrimPrefix(p.ImportPath, mod)] = p
	}
	return pkgs
}

func TestImportsPointDown(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	// Which of our packages each package may import directly. Packages not
	// listed (cmd, test kits, tests) are unconstrained.
	allowed := map[string][]string{
		"internal/config":         {},
		"internal/usererr":        {},
		"internal/llm":            {"internal/usererr"},
		"internal/acp":            {"internal/jsonstring"},
		"internal/jsonstring":     {},
		"internal/termsafe":       {},
		"internal/store":          {"internal/store/retype"},
		"internal/store/retype":   {},
		"internal/store/pgdriver": {}, // imports nothing of corvid: cmd/corvid registers it with internal/store
		"internal/llm/catalog":    {"internal/llm", "internal/config"},
		"internal/llm/script":     {"internal/llm"},
		"internal/llm/sse":        {},
		"internal/llm/providers": {"internal/llm", "internal/llm/catalog", "internal/config", "internal/usererr",
			"internal/llm/anthropic", "internal/llm/gemini", "internal/llm/openai", "internal/llm/script"},
		"internal/llm/anthropic": {"internal/llm", "internal/llm/sse"},
		"internal/llm/openai":    {"internal/llm", "internal/llm/sse", "internal/config"},
		"internal/llm/gemini":    {"internal/llm", "internal/llm/sse", "internal/config"},
		"internal/tool":          {"internal/llm"},
		"internal/permission":    {"internal/tool", "internal/llm"},
		"internal/commands":      {"internal/config", "internal/tool", "internal/llm"},
		"internal/prompt":        {"internal/commands", "internal/config"},
		"internal/mcp":           {"internal/config", "internal/tool", "internal/llm", "internal/llm/sse", "internal/usererr"},
		"internal/respond":       {"internal/config"},
		"internal/reaper":        {},
		"internal/jsonschema":    {},
		"internal/acpkit":        {"internal/jsonschema", "internal/llm/script"},
		"internal/agent": {"internal/llm", "internal/llm/catalog", "internal/tool", "internal/permission",
			"internal/store", "internal/mcp", "internal/commands", "internal/prompt", "internal/config", "internal/codemode", "internal/usererr", "internal/jsonstring"},
		"internal/codemode":   {},
		"internal/stackstart": {},
		"internal/fastrelay":  {},
		"internal/acpserver":  {"internal/acp", "internal/agent", "internal/config", "internal/llm", "internal/tool", "internal/mcp", "internal/respond", "internal/usererr"},
		"internal/print":      {"internal/agent", "internal/tool", "internal/termsafe"},
		"internal/serve":      {"internal/respond", "internal/dashboard"},
		"internal/dashboard":  {},
		"internal/profile":    {"internal/config"},
		// The TUI is an ACP client (DESIGN.md §9): the protocol only.
		"internal/tui":     {"internal/acp", "internal/tuiargs", "internal/termsafe"},
		"internal/tuiargs": {},
	}
	for name, ok := range allowed {
		p, found := pkgs[name]
		if !found {
			t.Errorf("package %s does not exist any more; update this test", name)
			continue
		}
		for _, imp := range p.Imports {
			if dep, ours := strings.CutPrefix(imp, mod); ours && !slices.Contains(ok, dep) {
				t.Errorf("%s imports %s, against ARCHITECTURE.md §1", name, dep)
			}
		}
	}
}

// The TUI reaches the agent only through ACP, as an editor does: none of
// its dependencies, direct or not, is a package of corvid's core (its own
// flags and keys, internal/tuiargs, acp's JSON string writer,
// internal/jsonstring, and the scrubbing of text for the terminal,
// internal/termsafe, import nothing).
func TestTUIIsAnACPClient(t *testing.T) {
	p, ok := listPackages(t)["internal/tui"]
	if !ok {
		t.Fatal("package internal/tui does not exist any more; update this test")
	}
	for _, d := range p.Deps {
		if dep, ours := strings.CutPrefix(d, mod); ours && dep != "internal/acp" && dep != "internal/tuiargs" && dep != "internal/jsonstring" && dep != "internal/termsafe" {
			t.Errorf("internal/tui depends on %s; it may reach the agent only through internal/acp", dep)
		}
	}
}

// The corvid binary, which editors start for every session, does not link
// the terminal UI (#36): its library's package init and pages would cost
// every `corvid acp` start (ARCHITECTURE.md §6). corvid-tui links it.
func TestCorvidLinksNoTUI(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", mod+"cmd/corvid", mod+"cmd/corvid-tui").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	if !strings.Contains(string(out), "charm.land/bubbletea/v2") {
		t.Fatal("corvid-tui does not link bubbletea; this test checks nothing")
	}
	out, err = exec.Command("go", "list", "-deps", mod+"cmd/corvid").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, d := range strings.Fields(string(out)) {
		if strings.HasPrefix(d, "charm.land/") || strings.HasPrefix(d, "github.com/charmbracelet/") || d == mod+"internal/tui" {
			t.Errorf("cmd/corvid links %s", d)
		}
	}
}

// The Anthropic provider speaks HTTP itself (#18): the binary does not link
// the Anthropic SDK, which stays a test-only oracle (go.mod keeps it for
// the tests of internal/llm/anthropic and test/recorded/anthropic).
func TestBinaryLinksNoAnthropicSDK(t *testing.T) {
	const sdk = "github.com/anthropics/anthropic-sdk-go"
	out, err := exec.Command("go", "list", "-deps", mod+"cmd/corvid").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, mod+"internal/llm/anthropic") {
		t.Fatalf("cmd/corvid does not link internal/llm/anthropic; this test checks nothing")
	}
	for _, d := range deps {
		if strings.HasPrefix(d, sdk) {
			t.Errorf("cmd/corvid links %s", d)
		}
	}
	for name, p := range listPackages(t) {
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, sdk) {
				t.Errorf("%s imports %s outside its tests", name, imp)
			}
		}
	}
}

// The MCP client is corvid's own (#18): the binary does not link the MCP
// go-sdk, whose package init and dependencies cost every start ~3 MiB of
// resident memory and ~5 ms; it stays a test-only oracle (the servers of
// internal/mcp's tests and testdata, test/e2e, test/mcpreal).
func TestBinaryLinksNoMCPSDK(t *testing.T) {
	const sdk = "github.com/modelcontextprotocol/go-sdk"
	out, err := exec.Command("go", "list", "-deps", mod+"cmd/corvid").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, mod+"internal/mcp") {
		t.Fatalf("cmd/corvid does not link internal/mcp; this test checks nothing")
	}
	for _, d := range deps {
		if strings.HasPrefix(d, sdk) {
			t.Errorf("cmd/corvid links %s", d)
		}
	}
}

// The default corvid links no PostgreSQL client (pgx's init and pages cost
// every start of corvid acp more than its budgets allow); corvid-pg, the
// same package built with -tags corvid_pg, links the store's driver, and
// internal/store imports nothing of it.
func TestOnlyCorvidPGLinksPostgres(t *testing.T) {
	deps := func(tags ...string) []string {
		args := append([]string{"list"}, tags...)
		out, err := exec.Command("go", append(args, "-deps", mod+"cmd/corvid")...).Output()
		if err != nil {
			t.Fatalf("go list %v -deps: %v", tags, err)
		}
		return strings.Fields(string(out))
	}
	for _, d := range deps() {
		if strings.HasPrefix(d, "github.com/jackc/") || d == mod+"internal/store/pgdriver" {
			t.Errorf("cmd/corvid links %s; only corvid-pg (-tags corvid_pg) may", d)
		}
	}
	if !slices.Contains(deps("-tags", "corvid_pg"), mod+"internal/store/pgdriver") {
		t.Errorf("cmd/corvid built with -tags corvid_pg does not link internal/store/pgdriver")
	}
	for _, d := range listPackages(t)["internal/store"].Deps {
		if strings.HasPrefix(d, "github.com/jackc/") || d == mod+"internal/store/pgdriver" {
			t.Errorf("internal/store links %s", d)
		}
	}
}

// Provider SDKs are imported by their own llm/<provider> package alone, the
// MCP SDK by tests only, SQLite by internal/store, and only acpserver (and
// the ACP clients: the conformance kit and the TUI) imports the wire package.
func TestSDKsStayInTheirPackages(t *testing.T) {
	pkgs := listPackages(t)
	owners := map[string]string{
		"github.com/anthropics/anthropic-sdk-go":   "internal/llm/anthropic",
		"github.com/openai/openai-go":              "internal/llm/openai",
		"github.com/modelcontextprotocol/go-sdk":   "(tests only)",
		"modernc.org/sqlite":                       "internal/store",
		"github.com/jackc/pgx":                     "internal/store/pgdriver",
		"go.starlark.net":                          "internal/codemode",
		"github.com/coder/acp-go-sdk":              "(tests only)",
		"github.com/santhosh-tekuri/jsonschema/v6": "(tests only)",
	}
	for name, p := range pkgs {
		if strings.HasPrefix(name, "test/") || strings.Contains(name, "testkit") || strings.Contains(name, "testdata") {
			continue
		}
		for _, imp := range p.Imports {
			for sdk, owner := range owners {
				if strings.HasPrefix(imp, sdk) && name != owner {
					t.Errorf("%s imports %s; only %s may", name, imp, owner)
				}
			}
			if imp == mod+"internal/acp" && name != "internal/acpserver" && name != "internal/conformance" && name != "internal/tui" {
				t.Errorf("%s imports internal/acp; only acpserver, conformance and tui may", name)
			}
		}
	}
	// Start-up is a budget (ARCHITECTURE.md §7): the binary never links the test
	// schema validator, whose package init compiles meta-schemas (18 ms).
	for _, d := range pkgs["cmd/corvid"].Deps {
		if strings.HasPrefix(d, "github.com/santhosh-tekuri/jsonschema") {
			t.Errorf("cmd/corvid links %s; use internal/jsonschema", d)
		}
		// go-git's gitignore package drags its config parser (gcfg,
		// encoding/gob) into every start (#18); internal/tool has its own.
		if strings.HasPrefix(d, "github.com/go-git/") {
			t.Errorf("cmd/corvid links %s; use internal/tool's gitignore matcher", d)
		}
	}
	// The core never links a model provider's SDK.
	for _, core := range []string{"internal/agent", "internal/tool", "internal/store", "internal/acpserver"} {
		for _, d := range pkgs[core].Deps {
			for _, sdk := range []string{"github.com/anthropics/anthropic-sdk-go", "github.com/openai/openai-go"} {
				if strings.HasPrefix(d, sdk) {
					t.Errorf("%s links provider SDK %s", core, d)
				}
			}
		}
	}
}

// The binary speaks the OpenAI protocols over plain net/http
// (internal/llm/openai); github.com/openai/openai-go is a test-only oracle
// there and must never be linked into corvid again.
func TestBinaryDoesNotLinkOpenAISDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", mod+"cmd/corvid").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, mod+"internal/llm/openai") {
		t.Fatalf("cmd/corvid does not link internal/llm/openai; the check below would prove nothing")
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "github.com/openai/openai-go") {
			t.Errorf("cmd/corvid links %s", d)
		}
	}
}
