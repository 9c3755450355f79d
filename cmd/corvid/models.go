package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm/catalog"
	"github.com/corvid-agent/corvid/internal/llm/providers"
)

// modelsCmd lists the models usable with the credentials at hand. Its
// output goes to stdout.
type modelsCmd struct {
	Provider string `arg:"" optional:"" help:"Only this provider (shown even without credentials, with how to add them)."`
}

func (c *modelsCmd) Run() error {
	cwd, _ := os.Getwd()
	// A project's config names providers and models: shown, not obeyed.
	return toStdout(func(w io.Writer) error { return runModels(config.OSEnv{}, cwd, c.Provider, w) })
}

func runModels(env config.Env, cwd, only string, out io.Writer) error {
	file, err := config.Load(env, cwd)
	if err != nil {
		return err
	}
	providers.RegisterModels(file)
	list := file.AllProviders()
	if only != "" {
		p, ok := file.Provider(only)
		if !ok {
			_, _, err := loadProvider(env, cwd, only)
			return err
		}
		list = []config.Provider{p}
	}
	statuses := config.StatusOf(env, list)

	// Ask the local servers what they serve, concurrently and briefly.
	models := make([][]catalog.Entry, len(statuses))
	reachable := make([]bool, len(statuses))
	var wg sync.WaitGroup
	for i, st := range statuses {
		if !st.Configured {
			continue
		}
		wg.Go(func() { models[i], reachable[i] = providers.Models(env, st) })
	}
	wg.Wait()

	var missing, notRunning []string
	listed := false // a provider's models were printed above the notes
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for i, st := range statuses {
		p := st.Provider
		if !st.Configured {
			if only == "" {
				missing = append(missing, p.Name)
				continue
			}
			fmt.Fprintf(tw, "%s: no credentials; set %s or run `corvid auth login %s`\n", p.Name, strings.Join(p.KeyVars, " or "), p.Name)
			continue
		}
		local := !p.NeedsKey
		if local && !reachable[i] {
			if only == "" {
				notRunning = append(notRunning, fmt.Sprintf("%s (no server at %s)", p.Name, st.BaseURL))
				continue
			}
			fmt.Fprintf(tw, "%s: no server answering at %s\n", p.Name, st.BaseURL)
			continue
		}
		listed = true
		if local {
			fmt.Fprintf(tw, "%s (local server at %s)\n", p.Name, st.BaseURL)
		} else {
			fmt.Fprintf(tw, "%s (key from %s)\n", p.Name, st.Source)
		}
		for _, e := range models[i] {
			fmt.Fprintf(tw, "  %s:%s\t%s\t%s\t%s\t%s\n", p.Name, e.ID, contextText(e), tokens(int64(e.MaxOutput))+" out", priceText(e), features(e))
		}
		if len(models[i]) == 0 {
			fmt.Fprintf(tw, "  (no model list; use %s:MODEL)\n", p.Name)
		}
	}
	sep := func() {
		if listed {
			fmt.Fprintln(tw)
		}
		listed = true
	}
	if len(notRunning) > 0 {
		sep()
		fmt.Fprintf(tw, "Local servers not running: %s\n", strings.Join(notRunning, ", "))
	}
	if len(missing) > 0 {
		sep()
		fmt.Fprintf(tw, "Without credentials: %s (corvid auth status says how to add them)\n", strings.Join(missing, ", "))
	}
	return tw.Flush()
}

func tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.3gM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%dK", n/1000)
	}
	return fmt.Sprint(n)
}

func contextText(e catalog.Entry) string {
	var parts []string
	for _, t := range e.Tiers() {
		parts = append(parts, tokens(t))
	}
	s := strings.Join(parts, "/") + " ctx"
	if !e.Known && !e.Local {
		s += "?"
	}
	return s
}

func priceText(e catalog.Entry) string {
	switch {
	case e.Local:
		return "free (local)"
	case !e.Known:
		return "price unknown"
	}
	return fmt.Sprintf("$%g/$%g per M", e.Price.Input, e.Price.Output)
}

func features(e catalog.Entry) string {
	var f []string
	if e.Images {
		f = append(f, "images")
	}
	if e.Reasoning {
		f = append(f, "reasoning")
	}
	return strings.Join(f, " ")
}
