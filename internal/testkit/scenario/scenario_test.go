package scenario

import (
	"strings"
	"testing"
)

const sample = `What the file pins down.

-- script.json --
{"responses": []}
-- files/src/a.txt --
alpha
-- steps --
# a comment
host zed
args --yolo
hide config_option_update
permission allow_once
prompt "two\nlines"
-- want/src/a.txt --
alpha
-- absent --
b.txt c.txt
-- transcript --
--> {"id":2}
`

func TestParseReadsEverySection(t *testing.T) {
	s, err := Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if s.Script != "{\"responses\": []}\n" || s.Files["src/a.txt"] != "alpha\n" || s.Want["src/a.txt"] != "alpha\n" {
		t.Errorf("script %q files %v want %v", s.Script, s.Files, s.Want)
	}
	if s.Host != "zed" || strings.Join(s.Args, " ") != "--yolo" || !s.Hide["config_option_update"] || !s.Hide["available_commands_update"] {
		t.Errorf("host %q args %v hide %v", s.Host, s.Args, s.Hide)
	}
	if len(s.Steps) != 2 || s.Steps[0].Verb != "permission" || unquote(s.Steps[1].Arg) != "two\nlines" {
		t.Errorf("steps %+v", s.Steps)
	}
	if strings.Join(s.Absent, ",") != "b.txt,c.txt" || s.Transcript != "--> {\"id\":2}\n" {
		t.Errorf("absent %v transcript %q", s.Absent, s.Transcript)
	}
	if got := string(s.archive.format()); got != sample {
		t.Errorf("format does not give the file back:\n%s", got)
	}
}

func TestParseRefusesAnUnknownStep(t *testing.T) {
	bad := strings.Replace(sample, "host zed", "hots zed", 1)
	if _, err := Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), `"hots"`) {
		t.Errorf("Parse of an unknown verb: %v", err)
	}
}

func TestNormaliserNumbersIDsAndHidesRunDetails(t *testing.T) {
	n := newNormaliser("/tmp/w1", "/tmp/h1", "/tmp/s/script.json", map[string]bool{"available_commands_update": true})
	lines := []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_b","update":{"sessionUpdate":"tool_call","toolCallId":"x9","locations":[{"path":"/tmp/w1/a.txt"}]}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_a","update":{"sessionUpdate":"usage_update","used":812,"size":200000,"updatedAt":"2026-12-01T18:25:42.355802398Z"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_b","update":{"sessionUpdate":"available_commands_update"}}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"model":"script:/tmp/s/script.json","toolCallId":"x9"}}`,
	}
	want := []string{
		`{"method":"session/update","params":{"sessionId":"$SID1","update":{"locations":[{"path":"$WORK/a.txt"}],"sessionUpdate":"tool_call","toolCallId":"$TOOL1"}}}`,
		`{"method":"session/update","params":{"sessionId":"$SID2","update":{"sessionUpdate":"usage_update","size":200000,"updatedAt":"$TIME","used":"$N"}}}`,
		"",
		`{"id":3,"result":{"model":"script:$SCRIPT","toolCallId":"$TOOL1"}}`,
	}
	for i, l := range lines {
		got, keep := n.frame(l)
		if !keep {
			got = ""
		}
		if got != want[i] {
			t.Errorf("frame %d:\n got %s\nwant %s", i, got, want[i])
		}
	}
}

func TestLineDiffMarksChangedLines(t *testing.T) {
	got := lineDiff("a\nb\nc\n", "a\nB\nc\nd\n")
	for _, want := range []string{"- b\n", "+ B\n", "+ d\n", "  a\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("diff lacks %q:\n%s", want, got)
		}
	}
}
