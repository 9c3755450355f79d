package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/corvid-agent/corvid/internal/agent"
	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/store"
	"github.com/corvid-agent/corvid/internal/termsafe"
	"github.com/corvid-agent/corvid/internal/tool"
)

// sessionsCmd reads and removes the sessions every corvid process records in
// the session store (config.DataDir/sessions.db). It opens the store
// directly, so it works while editors are running corvid.
type sessionsCmd struct {
	List   sessionsListCmd   `cmd:"" help:"List stored sessions, most recently updated first."`
	Show   sessionsShowCmd   `cmd:"" help:"Print a stored session as a readable transcript."`
	Export sessionsExportCmd `cmd:"" help:"Write a stored session as Markdown or JSON Lines to stdout."`
	Rm     sessionsRmCmd     `cmd:"" help:"Delete a stored session and its history."`
}

type sessionsListCmd struct {
	StoreFlag storeFlag `embed:""`
	Cwd       string    `name:"cwd" placeholder:"DIR" help:"Only sessions whose working directory is DIR (relative paths are made absolute)."`
	JSON      bool      `name:"json" help:"Print a JSON array instead of a table."`
	All       bool      `name:"all" help:"Also list sessions that were opened but never prompted."`
}

type sessionsShowCmd struct {
	StoreFlag storeFlag `embed:""`
	ID        string    `arg:"" help:"Session id, or a unique prefix of one (see corvid sessions list)."`
}

type sessionsExportCmd struct {
	StoreFlag storeFlag `embed:""`
	ID        string    `arg:"" help:"Session id, or a unique prefix of one (see corvid sessions list)."`
	Format    string    `name:"format" default:"markdown" enum:"markdown,jsonl" help:"markdown: a document to read or share; jsonl: one JSON object per stored event, after a first line with the session's metadata."`
}

type sessionsRmCmd struct {
	StoreFlag storeFlag `embed:""`
	ID        string    `arg:"" help:"Session id, or a unique prefix of one (see corvid sessions list)."`
}

func (c *sessionsListCmd) Run() error {
	return toStdout(func(w io.Writer) error { return runSessionsList(config.OSEnv{}, *c, w) })
}
func (c *sessionsShowCmd) Run() error {
	return toStdout(func(w io.Writer) error { return runSessionsShow(config.OSEnv{}, *c, w) })
}
func (c *sessionsExportCmd) Run() error {
	return toStdout(func(w io.Writer) error { return runSessionsExport(config.OSEnv{}, *c, w) })
}
func (c *sessionsRmCmd) Run() error {
	return toStdout(func(w io.Writer) error { return runSessionsRm(config.OSEnv{}, *c, w) })
}

// toStdout runs write on stdout. On a terminal, what it writes goes with
// its control characters as escapes (termsafe): a stored session holds
// what a model, a file or a command wrote, and a title or an answer must
// not move the cursor, set the title or write the clipboard there. Into
// a pipe or a file it goes as stored.
func toStdout(write func(io.Writer) error) error {
	if !isTerminal(os.Stdout) {
		return write(os.Stdout)
	}
	tw := termsafe.NewWriter(os.Stdout)
	err := write(tw)
	if ferr := tw.Flush(); err == nil {
		err = ferr
	}
	return err
}

// sessionsDBPath is the store every corvid process of this user shares.
func sessionsDBPath(env config.Env) string {
	return filepath.Join(config.DataDir(env), "sessions.db")
}

// openSessions opens the store the flag, CORVID_STORE or the user config
// chooses, or returns nil when it is a SQLite file that does not exist
// yet: a command that only reads must not create the database.
func openSessions(env config.Env, f storeFlag) (*store.Store, error) {
	var file *config.File
	if f.Store == "" && env.Getenv("CORVID_STORE") == "" {
		cwd, _ := os.Getwd()
		var err error
		if file, err = config.Load(env, cwd); err != nil {
			return nil, err
		}
	}
	target, err := f.target(env, file)
	if err == nil {
		err = handOffPostgres(target)
	}
	if err != nil {
		return nil, err
	}
	return openStoreTarget(target)
}

func runSessionsList(env config.Env, c sessionsListCmd, w io.Writer) error {
	st, err := openSessions(env, c.StoreFlag)
	if err != nil {
		return err
	}
	var list []listedSession
	hidden := 0
	if st != nil {
		defer st.Close()
		if list, hidden, err = summarizeSessions(context.Background(), st, c.Cwd, c.All); err != nil {
			return err
		}
	}
	live, daemon, derr := daemonSessions(env)
	if derr != nil {
		// The store's list still stands.
		fmt.Fprintln(os.Stderr, "corvid sessions: warning:", derr)
	}
	for i := range list {
		list[i].live = live[list[i].ID]
	}
	if c.JSON {
		return writeSessionsJSON(w, list)
	}
	if len(list) == 0 {
		switch {
		case hidden > 0:
			fmt.Fprintf(w, "No prompted sessions%s; %d opened without a prompt (corvid sessions list --all shows them).\n", forCwd(c.Cwd), hidden)
		case c.Cwd != "":
			fmt.Fprintf(w, "No sessions for %s.\n", c.Cwd)
		default:
			fmt.Fprintln(w, "No sessions stored yet.")
		}
		return nil
	}
	withErrors := slices.ContainsFunc(list, func(l listedSession) bool { return l.sum.LastError != "" })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "ID\tUPDATED\tTURNS\tTOKENS\tCOST\tTITLE\tCWD"
	if withErrors {
		head += "\tLAST ERROR"
	}
	if daemon {
		head += "\tIN THE DAEMON"
	}
	fmt.Fprintln(tw, head)
	for _, l := range list {
		s := l.Session
		row := fmt.Sprintf("%s\t%s\t%d\t%s\t%s\t%s\t%s", s.ID, s.UpdatedAt.Local().Format("2006-01-02 15:04"), l.sum.Turns,
			shortCount(totalTokens(l.sum.Tokens)), costText(l.sum.CostUSD), sessionTitle(s), s.Cwd)
		if withErrors {
			row += "\t" + clip(singleLine(l.sum.LastError), 80)
		}
		if daemon {
			row += "\t" + l.live.describe()
		}
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if hidden > 0 {
		fmt.Fprintf(w, "(%d sessions opened without a prompt are not listed; --all shows them.)\n", hidden)
	}
	return nil
}

func forCwd(cwd string) string {
	if cwd == "" {
		return ""
	}
	return " for " + cwd
}

// listedSession is a stored session with its summary.
type listedSession struct {
	store.Session
	sum  agent.Summary
	live *liveState // what the daemon says of it (nil: no daemon, or it does not hold it)
}

// summarizeSessions lists the sessions (of cwd, when set) with their
// summaries; sessions never prompted are left out unless all is set, and
// counted.
func summarizeSessions(ctx context.Context, st *store.Store, cwd string, all bool) ([]listedSession, int, error) {
	list, err := listSessions(ctx, st, cwd)
	if err != nil {
		return nil, 0, err
	}
	out := make([]listedSession, 0, len(list))
	hidden := 0
	for _, s := range list {
		sum, err := agent.Summarize(ctx, st, s.ID)
		if err != nil {
			return nil, 0, err
		}
		if sum.Turns == 0 && !all {
			hidden++
			continue
		}
		out = append(out, listedSession{Session: s, sum: sum})
	}
	return out, hidden, nil
}

func totalTokens(u llm.Usage) int64 {
	return u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens
}

// shortCount writes a count the way a table shows it: 950, 12.3k, 4.1M.
func shortCount(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
}

func costText(usd *float64) string {
	if usd == nil {
		return "-"
	}
	return fmt.Sprintf("$%.4f", *usd)
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// listSessions walks every page of the store's list.
func listSessions(ctx context.Context, st *store.Store, cwd string) ([]store.Session, error) {
	if cwd != "" {
		abs, err := filepath.Abs(cwd)
		if err != nil {
			return nil, fmt.Errorf("--cwd %s: %w", cwd, err)
		}
		cwd = abs
	}
	var out []store.Session
	cursor := ""
	for {
		page, next, err := st.List(ctx, store.ListOptions{Cwd: cwd, Cursor: cursor, Limit: store.MaxListLimit})
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if next == "" {
			return out, nil
		}
		cursor = next
	}
}

// sessionJSON is a session's metadata as list --json and export print it.
type sessionJSON struct {
	ID             string   `json:"id"`
	Cwd            string   `json:"cwd"`
	AdditionalDirs []string `json:"additionalDirectories,omitempty"`
	Title          string   `json:"title"`
	Model          string   `json:"model,omitempty"`
	ParentID       string   `json:"parentId,omitempty"`
	CreatedAt      string   `json:"createdAt"`
	UpdatedAt      string   `json:"updatedAt"`
	// Set by list --json (export has the events themselves).
	Turns     *int       `json:"turns,omitempty"`
	Tokens    *llm.Usage `json:"tokens,omitempty"`
	CostUSD   *float64   `json:"costUsd,omitempty"`
	LastError string     `json:"lastError,omitempty"`
	// Live is the session's state in the running daemon (corvid serve),
	// when it holds the session.
	Live *liveState `json:"live,omitempty"`
}

func toSessionJSON(s store.Session) sessionJSON {
	return sessionJSON{ID: s.ID, Cwd: s.Cwd, AdditionalDirs: s.AdditionalDirs, Title: s.Title, Model: s.Model, ParentID: s.ParentID,
		CreatedAt: s.CreatedAt.UTC().Format(time.RFC3339Nano), UpdatedAt: s.UpdatedAt.UTC().Format(time.RFC3339Nano)}
}

func writeSessionsJSON(w io.Writer, list []listedSession) error {
	out := make([]sessionJSON, 0, len(list))
	for _, l := range list {
		j := toSessionJSON(l.Session)
		j.Turns, j.Tokens, j.CostUSD, j.LastError = &l.sum.Turns, &l.sum.Tokens, l.sum.CostUSD, l.sum.LastError
		if l.live.held() {
			j.Live = l.live
		}
		out = append(out, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func sessionTitle(s store.Session) string {
	if t := singleLine(s.Title); t != "" {
		return t
	}
	return "(untitled)"
}

// findSession resolves an id or a unique prefix of one.
func findSession(ctx context.Context, st *store.Store, id string) (store.Session, error) {
	if st == nil || id == "" {
		return store.Session{}, fmt.Errorf("no stored session %q; corvid sessions list shows the ones that exist", id)
	}
	s, err := st.GetSession(ctx, id)
	if err == nil || !errors.Is(err, store.ErrNotFound) {
		return s, err
	}
	all, err := listSessions(ctx, st, "")
	if err != nil {
		return store.Session{}, err
	}
	// Like git's short hashes, the prefix may leave out the "sess_" that
	// every id starts with.
	bare := strings.TrimPrefix(id, "sess_")
	var matches []store.Session
	for _, s := range all {
		if strings.HasPrefix(s.ID, id) || strings.HasPrefix(strings.TrimPrefix(s.ID, "sess_"), bare) {
			matches = append(matches, s)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return store.Session{}, fmt.Errorf("no stored session %q; corvid sessions list shows the ones that exist", id)
	}
	ids := make([]string, 0, len(matches))
	for _, m := range matches {
		ids = append(ids, m.ID)
	}
	return store.Session{}, fmt.Errorf("%q matches %d sessions (%s); give more of the id", id, len(matches), strings.Join(ids, ", "))
}

func runSessionsRm(env config.Env, c sessionsRmCmd, w io.Writer) error {
	ctx := context.Background()
	st, err := openSessions(env, c.StoreFlag)
	if err != nil {
		return err
	}
	if st != nil {
		defer st.Close()
	}
	s, err := findSession(ctx, st, c.ID)
	if err != nil {
		return err
	}
	// Refuse while a corvid process is running a turn of it.
	release, err := st.Acquire(ctx, s.ID, "corvid sessions rm")
	if err != nil {
		return fmt.Errorf("not deleted: %w", err)
	}
	defer release()
	if err := st.Delete(ctx, s.ID); err != nil {
		return err
	}
	fmt.Fprintf(w, "Deleted session %s (%s).\n", s.ID, sessionTitle(s))
	return nil
}

// loadTranscript opens the store and folds a session's events.
func loadTranscript(env config.Env, f storeFlag, id string) (store.Session, []store.Event, error) {
	ctx := context.Background()
	st, err := openSessions(env, f)
	if err != nil {
		return store.Session{}, nil, err
	}
	if st != nil {
		defer st.Close()
	}
	s, err := findSession(ctx, st, id)
	if err != nil {
		return store.Session{}, nil, err
	}
	evs, err := st.Events(ctx, s.ID)
	return s, evs, err
}

// transcriptItem is one entry of a readable transcript.
type transcriptItem struct {
	kind agent.EventKind // a chunk kind, EventToolCall or EventPlan
	id   string          // message id of a chunk
	text string
	tool *agent.ToolCall
	plan []tool.PlanEntry
}

// costOf is a folded session's total cost, when known.
func costOf(lg *agent.Log) *float64 {
	if lg.Usage == nil {
		return nil
	}
	return lg.Usage.CostUSD
}

// transcript turns a folded event log into readable items: the blocks of
// one message as one text, each tool call in its final state (a call that
// never finished shows as interrupted), plans and turn errors in place.
func transcript(lg *agent.Log) []transcriptItem {
	var out []transcriptItem
	for _, e := range lg.Entries() {
		switch e.Kind {
		case agent.EventTurnError:
			out = append(out, transcriptItem{kind: e.Kind, text: e.Content.Text})
		case agent.EventUserChunk, agent.EventMessageChunk, agent.EventThoughtChunk:
			if e.Content == nil {
				continue
			}
			text := blockText(*e.Content)
			if n := len(out); n > 0 && out[n-1].kind == e.Kind && out[n-1].id == e.MessageID {
				out[n-1].text += text // a non-text block of the same message
				continue
			}
			out = append(out, transcriptItem{kind: e.Kind, id: e.MessageID, text: text})
		case agent.EventToolCall:
			tc := *e.ToolCall
			mergeToolState(&tc, e.Final)
			if e.Interrupted {
				tc.Status = "interrupted"
			}
			out = append(out, transcriptItem{kind: e.Kind, tool: &tc})
		case agent.EventPlan:
			out = append(out, transcriptItem{kind: e.Kind, plan: e.Plan})
		}
	}
	return out
}

func mergeToolState(dst, upd *agent.ToolCall) {
	if upd.Status != "" {
		dst.Status = upd.Status
	}
	if upd.Title != "" {
		dst.Title = upd.Title
	}
	if upd.Content != nil {
		dst.Content = upd.Content
	}
}

// blockText is a content block as text; non-text blocks become a short note.
func blockText(b agent.Block) string {
	switch b.Type {
	case agent.BlockText:
		return b.Text
	case agent.BlockResource:
		if !b.Blob {
			return fmt.Sprintf("[resource %s]\n%s\n", b.URI, b.Text)
		}
		return fmt.Sprintf("[resource %s, %d bytes]", b.URI, len(b.Data))
	case agent.BlockResourceLink:
		return fmt.Sprintf("[link %s]", b.URI)
	}
	return fmt.Sprintf("[%s %s, %d bytes]", b.Type, b.MimeType, len(b.Data))
}

var planMarks = map[string]string{"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}

func runSessionsShow(env config.Env, c sessionsShowCmd, w io.Writer) error {
	s, evs, err := loadTranscript(env, c.StoreFlag, c.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Session %s: %s\nDirectory %s, updated %s\n", s.ID, sessionTitle(s), s.Cwd, s.UpdatedAt.Local().Format("2006-01-02 15:04:05"))
	if p := agent.StoredProfile(s); p != nil {
		depth := "default"
		switch {
		case p.NoSubAgents:
			depth = "0 (no sub-agents)"
		case p.MaxDepth > 0:
			depth = fmt.Sprint(p.MaxDepth)
		}
		fmt.Fprintf(w, "Agent %s, max sub-agent depth %s\n", p.Name, depth)
	}
	lg := agent.Fold(evs)
	t := lg.Tokens
	fmt.Fprintf(w, "%s; tokens: %d input, %d output, %d cache reads, %d cache writes; cost %s\n",
		plural(lg.Turns, "turn"), t.InputTokens, t.OutputTokens, t.CacheReadTokens, t.CacheWriteTokens, costText(costOf(lg)))
	if lg.LastError != "" {
		fmt.Fprintf(w, "The last turn failed: %s\n", singleLine(lg.LastError))
	}
	labels := map[agent.EventKind]string{agent.EventUserChunk: "You", agent.EventMessageChunk: "Agent", agent.EventThoughtChunk: "Thinking"}
	for _, it := range transcript(lg) {
		fmt.Fprintln(w)
		switch it.kind {
		case agent.EventTurnError:
			fmt.Fprintf(w, "Error:\n%s", indentLines(it.text, "  "))
		case agent.EventToolCall:
			fmt.Fprintf(w, "Tool %s: %s [%s]\n", it.tool.Name, singleLine(it.tool.Title), it.tool.Status)
			if text := toolText(it.tool); text != "" {
				fmt.Fprint(w, indentLines(clipLines(text, 12), "    "))
			}
		case agent.EventPlan:
			fmt.Fprintln(w, "Plan:")
			for _, e := range it.plan {
				fmt.Fprintf(w, "  %s %s\n", planMark(e.Status), e.Content)
			}
		default:
			fmt.Fprintf(w, "%s:\n%s", labels[it.kind], indentLines(it.text, "  "))
		}
	}
	return nil
}

func planMark(status string) string {
	if m, ok := planMarks[status]; ok {
		return m
	}
	return "[ ]"
}

// toolText is a tool call's displayed content as plain text.
func toolText(tc *agent.ToolCall) string {
	var b strings.Builder
	for _, c := range tc.Content {
		switch c.Type {
		case tool.ContentText:
			b.WriteString(strings.TrimRight(c.Text, "\n") + "\n")
		case tool.ContentDiff:
			fmt.Fprintf(&b, "changed %s\n", c.Path)
		case tool.ContentTerminal:
			fmt.Fprintf(&b, "(output in editor terminal %s)\n", c.TerminalID)
		case tool.ContentImage:
			fmt.Fprintf(&b, "(image %s)\n", c.MimeType)
		}
	}
	return b.String()
}

// clipLines keeps the first n lines of s.
func clipLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) <= n+1 {
		return s
	}
	return strings.Join(lines[:n], "") + fmt.Sprintf("… (%d more lines)\n", len(lines)-n-1)
}

// indentLines prefixes every line of s and ends it with a newline.
func indentLines(s, prefix string) string {
	s = strings.TrimRight(s, "\n")
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix) + "\n"
}

func runSessionsExport(env config.Env, c sessionsExportCmd, w io.Writer) error {
	s, evs, err := loadTranscript(env, c.StoreFlag, c.ID)
	if err != nil {
		return err
	}
	if c.Format == "jsonl" {
		return exportJSONL(w, s, evs)
	}
	return exportMarkdown(w, s, evs)
}

// exportJSONL writes the session's metadata, then every stored event as it
// is stored (display events and model-context records alike), one per line.
// Each line of a prompted turn carries the turn's id where CodeBuddy's JSONL
// has it: "providerData": {"conversationRequestId": ID} (agent.TurnIDsOf).
func exportJSONL(w io.Writer, s store.Session, evs []store.Event) error {
	enc := json.NewEncoder(w)
	if err := enc.Encode(map[string]any{"kind": "session", "session": toSessionJSON(s)}); err != nil {
		return err
	}
	turns := agent.TurnIDsOf(evs)
	for i, e := range evs {
		line := map[string]any{"kind": e.Kind, "seq": e.Seq, "time": e.Time.UTC().Format(time.RFC3339Nano)}
		if json.Valid(e.Payload) {
			line["payload"] = json.RawMessage(e.Payload)
		} else {
			line["payload"] = string(e.Payload)
		}
		if id := turns[i]; id != "" {
			line["providerData"] = map[string]string{conversationRequestIDKey: id}
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	return nil
}

// conversationRequestIDKey names the turn id in CodeBuddy's JSONL
// providerData.
const conversationRequestIDKey = "conversationRequestId"

func exportMarkdown(w io.Writer, s store.Session, evs []store.Event) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", sessionTitle(s))
	fmt.Fprintf(&b, "- Session: `%s`\n- Directory: `%s`\n- Created: %s\n- Updated: %s\n", s.ID, s.Cwd,
		s.CreatedAt.UTC().Format(time.RFC3339), s.UpdatedAt.UTC().Format(time.RFC3339))
	if s.Model != "" {
		fmt.Fprintf(&b, "- Model: `%s`\n", s.Model)
	}
	if s.ParentID != "" {
		fmt.Fprintf(&b, "- Forked from: `%s`\n", s.ParentID)
	}
	for _, it := range transcript(agent.Fold(evs)) {
		switch it.kind {
		case agent.EventTurnError:
			fmt.Fprintf(&b, "\n> **The turn failed:** %s\n", singleLine(it.text))
		case agent.EventUserChunk:
			fmt.Fprintf(&b, "\n## User\n\n%s\n", strings.TrimRight(it.text, "\n"))
		case agent.EventMessageChunk:
			fmt.Fprintf(&b, "\n## Agent\n\n%s\n", strings.TrimRight(it.text, "\n"))
		case agent.EventThoughtChunk:
			fmt.Fprintf(&b, "\n<details><summary>Thinking</summary>\n\n%s\n\n</details>\n", strings.TrimRight(it.text, "\n"))
		case agent.EventPlan:
			b.WriteString("\n### Plan\n\n")
			for _, e := range it.plan {
				fmt.Fprintf(&b, "- %s %s (%s)\n", planMark(e.Status), e.Content, e.Status)
			}
		case agent.EventToolCall:
			writeToolMarkdown(&b, it.tool)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeToolMarkdown(b *strings.Builder, tc *agent.ToolCall) {
	fmt.Fprintf(b, "\n### Tool `%s`: %s (%s)\n", tc.Name, singleLine(tc.Title), tc.Status)
	for _, c := range tc.Content {
		switch c.Type {
		case tool.ContentText:
			// Tool content is already Markdown (outputs come fenced).
			fmt.Fprintf(b, "\n%s\n", strings.TrimRight(c.Text, "\n"))
		case tool.ContentDiff:
			old := ""
			if c.OldText != nil {
				old = *c.OldText
			}
			hunk := lineHunk(old, c.NewText)
			fence := fenceFor(hunk)
			fmt.Fprintf(b, "\n`%s`:\n\n%sdiff\n%s%s\n", c.Path, fence, hunk, fence)
		case tool.ContentTerminal:
			fmt.Fprintf(b, "\n(output shown in the editor's terminal %s)\n", c.TerminalID)
		case tool.ContentImage:
			fmt.Fprintf(b, "\n(image %s)\n", c.MimeType)
		}
	}
}

// lineHunk is a one-hunk diff of old and new: the lines between their common
// leading and trailing lines, removed then added.
func lineHunk(oldText, newText string) string {
	a, b := splitLines(oldText), splitLines(newText)
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var h strings.Builder
	fmt.Fprintf(&h, "@@ -%d,%d +%d,%d @@\n", pre+1, len(a)-pre-suf, pre+1, len(b)-pre-suf)
	for _, l := range a[pre : len(a)-suf] {
		h.WriteString("-" + l + "\n")
	}
	for _, l := range b[pre : len(b)-suf] {
		h.WriteString("+" + l + "\n")
	}
	return h.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// fenceFor returns a backtick fence longer than any backtick run in s.
func fenceFor(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// plural writes "1 turn", "2 turns".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
