package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
)

// WriteTable writes the human summary: one row per requirement, then the totals.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "STATUS\tTIER\tREQUIREMENT\tDETAIL\n")
	for _, res := range r.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", res.Status, res.Tier, res.ID, oneLine(res.Detail, 160))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	counts := map[Status]int{}
	for _, res := range r.Results {
		counts[res.Status]++
	}
	verdict := "OK: no MANDATORY or advertised CAPABILITY requirement failed"
	if !r.OK() {
		verdict = "NOT CONFORMANT: " + strings.Join(r.blocking(), ", ")
	}
	_, err := fmt.Fprintf(w, "\n%d passed, %d failed, %d skipped in %s — %s\n",
		counts[Pass], counts[Fail], counts[Skipped], r.Duration, verdict)
	return err
}

func (r *Report) blocking() []string {
	var out []string
	for _, res := range r.Results {
		if res.Status == Fail && (res.Tier == Mandatory || res.Tier == Capability) {
			out = append(out, res.ID)
		}
	}
	return out
}

// WriteJSON writes the report, transcripts included for failures, to path.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
