package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/respond"
)

// respondCmd lists or answers the permission questions that corvid could
// not put to its host (hosts that send no clientCapabilities; see
// internal/respond).
type respondCmd struct {
	ID     string `arg:"" optional:"" help:"Id of the question to answer, as listed (e.g. q7k2). Without it, list the pending questions."`
	Answer string `arg:"" optional:"" help:"allow (this once), always (for the rest of the session) or deny; for a question with choices, a choice's number or label. Without it, show the question in full."`
	JSON   bool   `name:"json" help:"Print JSON instead of text."`
}

func (c *respondCmd) Run() error {
	// A question shows the command or the diff it is about, which the
	// model wrote: on a terminal, as text (toStdout).
	return toStdout(func(w io.Writer) error { return runRespond(config.OSEnv{}, *c, time.Now(), w, os.Stderr) })
}

func runRespond(env config.Env, c respondCmd, now time.Time, stdout, stderr io.Writer) error {
	dir := respondPlace(env)
	if c.Answer != "" {
		return answerQuestion(dir, c, stdout)
	}
	qs, listErr := respond.List(dir)
	if listErr != nil {
		// Some corvid process did not answer; show what the others hold.
		fmt.Fprintln(stderr, "corvid respond: warning:", listErr)
	}
	if c.ID != "" {
		return showQuestion(qs, c, now, stdout)
	}
	if c.JSON {
		if qs == nil {
			qs = []respond.Question{}
		}
		return writeRespondJSON(stdout, qs)
	}
	if len(qs) == 0 {
		fmt.Fprintln(stdout, "No permission questions are waiting.")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGE\tSESSION\tTITLE\tCWD")
	for _, q := range qs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", q.ID, questionAge(now, q.Asked), q.SessionID, singleLine(q.Title), q.Cwd)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\nAnswer with: corvid respond ID allow|always|deny (a question with choices: its number or label)")
	return nil
}

// answerQuestion replies and says what it did. The question is looked up
// first only to name it in the message; Reply decides.
func answerQuestion(dir respond.Place, c respondCmd, stdout io.Writer) error {
	if c.ID == "" {
		return errors.New("give the question's id before the answer")
	}
	var title string
	var question *respond.Question
	qs, _ := respond.List(dir)
	for i, q := range qs {
		if q.ID == c.ID {
			title, question = q.Title, &qs[i]
		}
	}
	a := respond.Answer(c.Answer)
	if question != nil {
		var err error
		if a, err = question.ParseReply(c.Answer); err != nil {
			return err
		}
	} // else Reply says what became of it (answered elsewhere, timed out, unknown)
	if err := respond.Reply(dir, c.ID, a); err != nil {
		return err
	}
	if c.JSON {
		return writeRespondJSON(stdout, map[string]string{"id": c.ID, "answer": string(a), "title": title})
	}
	if title != "" {
		fmt.Fprintf(stdout, "%s: %s (%s)\n", c.ID, a.Describe(), singleLine(title))
	} else {
		fmt.Fprintf(stdout, "%s: %s\n", c.ID, a.Describe())
	}
	return nil
}

func showQuestion(qs []respond.Question, c respondCmd, now time.Time, stdout io.Writer) error {
	for _, q := range qs {
		if q.ID != c.ID {
			continue
		}
		if c.JSON {
			return writeRespondJSON(stdout, q)
		}
		fmt.Fprintf(stdout, "%s  asked %s ago  session %s\n", q.ID, questionAge(now, q.Asked), q.SessionID)
		if q.Cwd != "" {
			fmt.Fprintf(stdout, "in %s\n", q.Cwd)
		}
		fmt.Fprintf(stdout, "\n%s\n", q.Title)
		if q.Detail != "" {
			fmt.Fprintf(stdout, "\n%s\n", strings.TrimRight(q.Detail, "\n"))
		}
		if len(q.Choices) > 0 {
			fmt.Fprintf(stdout, "\nChoices: %s\nAnswer with: corvid respond %s NUMBER (or the choice's label)\n", q.ChoiceList(), q.ID)
			return nil
		}
		fmt.Fprintf(stdout, "\nAnswer with: corvid respond %s allow|always|deny\n", q.ID)
		return nil
	}
	return fmt.Errorf("%w %q (corvid respond lists the pending ones)", respond.ErrUnknownQuestion, c.ID)
}

// respondPlace is where the control sockets live (config.RuntimePlace).
func respondPlace(env config.Env) respond.Place {
	r := config.RuntimePlace(env)
	return respond.Place{Dir: r.Dir, SharedTemp: r.SharedTemp}
}

func questionAge(now, asked time.Time) string {
	d := now.Sub(asked)
	if d < 0 {
		d = 0
	}
	return d.Round(time.Second).String()
}

// oneLine keeps a table row on one line.
func singleLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func writeRespondJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
