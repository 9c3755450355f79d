package conformance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Options configure a run.
type Options struct {
	// Agent is the command that serves ACP on stdio, with its arguments.
	Agent []string
	// Timeout bounds each check (default 10 s).
	Timeout time.Duration
	// Scripted says the agent is corvid (or accepts its flag): the runner writes
	// model scripts into each check's temporary directory and appends
	// `-m script:FILE`, so checks that need a model turn can run without credentials.
	Scripted bool
	// Only limits the run to these areas (see Areas); empty means all.
	Only []string
	// Env holds extra KEY=VALUE pairs for the agent's otherwise minimal environment.
	Env []string
	// Progress, if set, is called as each check finishes.
	Progress func(check string, elapsed time.Duration)
}

// Result is one requirement's outcome.
type Result struct {
	Requirement
	Status     Status  `json:"status"`
	Detail     string  `json:"detail,omitempty"`
	Checks     string  `json:"checks,omitempty"` // the checks that reported it
	Transcript []Entry `json:"transcript,omitempty"`
}

// Entry is one transcript line: what the client sent, what the agent wrote, a note.
type Entry struct {
	Check string `json:"check"`
	Ms    int64  `json:"ms"`  // since the agent process started
	Dir   string `json:"dir"` // send, recv, stderr, note
	Text  string `json:"text"`
}

// Report is the outcome of a run.
type Report struct {
	Agent    []string  `json:"agent"`
	Scripted bool      `json:"scripted"`
	Started  time.Time `json:"started"`
	Duration string    `json:"duration"`
	Results  []Result  `json:"results"`
}

// OK reports whether no MANDATORY requirement and no advertised CAPABILITY failed.
func (r *Report) OK() bool {
	for _, res := range r.Results {
		if res.Status == Fail && (res.Tier == Mandatory || res.Tier == Capability) {
			return false
		}
	}
	return true
}

// Get returns the result for a requirement id.
func (r *Report) Get(id string) (Result, bool) {
	for _, res := range r.Results {
		if res.ID == id {
			return res, true
		}
	}
	return Result{}, false
}

type runner struct {
	opts Options
	obs  *observer
	tmp  string
}

// Run runs every selected check against the agent and returns the report.
// An error means the run itself could not happen (bad options, no temp dir).
func Run(ctx context.Context, opts Options) (*Report, error) {
	if len(opts.Agent) == 0 {
		return nil, fmt.Errorf("no agent command given")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	for _, a := range opts.Only {
		if !slices.Contains(Areas, a) {
			return nil, fmt.Errorf("unknown area %q (want one of %s)", a, strings.Join(Areas, ", "))
		}
	}
	if _, err := loadSchema(); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "corvid-conformance-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	r := &runner{opts: opts, obs: newObserver(), tmp: tmp}
	rep := &Report{Agent: opts.Agent, Scripted: opts.Scripted, Started: time.Now()}

	results := map[string]*Result{}
	for i, ch := range checks {
		if !r.selected(ch.area) {
			continue
		}
		c := r.runCheck(ctx, i, ch)
		for _, res := range c.finalResults() {
			merge(results, res)
		}
	}
	for _, res := range r.obs.results(r) {
		merge(results, res)
	}
	for _, req := range Requirements {
		if !r.selected(req.Area) {
			continue
		}
		res, ok := results[req.ID]
		if !ok {
			res = &Result{Requirement: req, Status: Fail, Detail: "no check reported this requirement (runner defect)"}
		}
		rep.Results = append(rep.Results, *res)
	}
	rep.Duration = time.Since(rep.Started).Round(time.Millisecond).String()
	return rep, nil
}

func (r *runner) selected(area string) bool {
	// The schema is judged on every line of every check, so it is always reported.
	return area == AreaSchema || len(r.opts.Only) == 0 || slices.Contains(r.opts.Only, area)
}

// merge folds a result into the map: FAIL beats PASS beats SKIPPED; details accumulate.
func merge(m map[string]*Result, res *Result) {
	old, ok := m[res.ID]
	if !ok {
		cp := *res
		m[res.ID] = &cp
		return
	}
	rank := map[Status]int{Skipped: 0, Pass: 1, Fail: 2}
	if !strings.Contains(old.Checks, res.Checks) {
		old.Checks += ", " + res.Checks
	}
	switch {
	case rank[res.Status] > rank[old.Status]:
		old.Status, old.Detail, old.Transcript = res.Status, res.Detail, res.Transcript
	case rank[res.Status] == rank[old.Status] && res.Detail != "" && !strings.Contains(old.Detail, res.Detail):
		old.Detail += "; " + res.Detail
		old.Transcript = append(old.Transcript, res.Transcript...)
	}
}

// checkRun is one check in progress: its workspace, its agents, what it found.
type checkRun struct {
	ctx    context.Context
	r      *runner
	name   string
	script string
	reqs   []string
	ws     *workspace
	agents []*agent

	mu      sync.Mutex
	entries []Entry
	results map[string]*Result
}

func (r *runner) runCheck(parent context.Context, i int, ch check) *checkRun {
	ctx, cancel := context.WithTimeout(parent, r.opts.Timeout)
	defer cancel()
	c := &checkRun{ctx: ctx, r: r, name: ch.name, script: ch.script, reqs: ch.reqs, results: map[string]*Result{}}
	start := time.Now()
	ws, err := newWorkspace(filepath.Join(r.tmp, fmt.Sprintf("%02d-%s", i, ch.name)))
	if err != nil {
		for _, id := range ch.reqs {
			c.fail(id, "set up workspace: %v", err)
		}
		return c
	}
	c.ws = ws
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				c.note("check panicked: %v", p)
			}
		}()
		ch.run(c)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		// Killing the agents unblocks any read the check is waiting on.
		for _, a := range c.agentList() {
			a.proc.Kill()
		}
		<-done
	}
	timedOut := ctx.Err() != nil && parent.Err() == nil
	for _, a := range c.agentList() {
		a.stop(200 * time.Millisecond)
		if s := strings.TrimSpace(a.stderr.String()); s != "" {
			c.transcript("stderr", a.since(), s)
		}
	}
	for _, id := range ch.reqs {
		if _, ok := c.results[id]; !ok {
			if timedOut {
				c.fail(id, "check %s timed out after %s", ch.name, r.opts.Timeout)
			} else {
				c.fail(id, "check %s ended without a verdict", ch.name)
			}
		}
	}
	if r.opts.Progress != nil {
		r.opts.Progress(ch.name, time.Since(start))
	}
	return c
}

func (c *checkRun) agentList() []*agent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*agent(nil), c.agents...)
}

const maxEntries = 300

func (c *checkRun) transcript(dir string, at time.Duration, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxEntries {
		return
	}
	if len(text) > 2000 {
		text = text[:2000] + "…"
	}
	c.entries = append(c.entries, Entry{Check: c.name, Ms: at.Milliseconds(), Dir: dir, Text: text})
}

func (c *checkRun) note(format string, args ...any) {
	c.transcript("note", 0, fmt.Sprintf(format, args...))
}

func (c *checkRun) report(id string, st Status, format string, args ...any) {
	req, ok := requirementByID(id)
	if !ok {
		panic("conformance: unknown requirement " + id)
	}
	res := &Result{Requirement: req, Status: st, Detail: fmt.Sprintf(format, args...), Checks: c.name}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.results[id]; ok && old.Status == Fail && st != Fail {
		return // a failure already reported stands
	}
	c.results[id] = res
}

func (c *checkRun) pass(id, format string, args ...any) { c.report(id, Pass, format, args...) }
func (c *checkRun) skip(id, format string, args ...any) { c.report(id, Skipped, format, args...) }
func (c *checkRun) fail(id, format string, args ...any) { c.report(id, Fail, format, args...) }

// skipAll marks every listed requirement skipped (unless already decided).
func (c *checkRun) skipAll(ids []string, format string, args ...any) {
	for _, id := range ids {
		if _, ok := c.results[id]; !ok {
			c.skip(id, format, args...)
		}
	}
}

// failAll marks every listed requirement not yet decided as failed.
func (c *checkRun) failAll(ids []string, format string, args ...any) {
	for _, id := range ids {
		if _, ok := c.results[id]; !ok {
			c.fail(id, format, args...)
		}
	}
}

// finalResults attaches the transcript to failures; called once the check is over.
func (c *checkRun) finalResults() []*Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Result
	for _, res := range c.results {
		if res.Status == Fail {
			res.Transcript = append([]Entry(nil), c.entries...)
		}
		out = append(out, res)
	}
	return out
}
