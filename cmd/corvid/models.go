package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/llm/catalog"
	"github.com/corvid-agent/corvid/internal/llm/openai"

	"github.com/corvid-agent/corvid/internal/llm/anthropic"
	"github.com/corvid-agent/corvid/internal/llm/gemini"
)

// modelsCmd lists the models usable with the credentials at hand. Its
// output goes to stdout.
type modelsCmd struct {
	Provider string `arg:"" optional:"" help:"Only this provider (shown even without credentials, with how to add them)."`
}

func (c *modelsCmd) Run() error {
	cwd, _ := os.Getwd()
	return runModels(config.OSEnv{}, cwd, c.Provider, os.Stdout)
}

func runModels(env config.Env, cwd, only string, out io.Writer) error {
	file, err := config.Load(env, cwd)
	if err != nil {
		return err
	}
	registerModels(file)
	providers := file.AllProviders()
	if only != "" {
		p, ok := file.Provider(only)
		if !ok {
			_, _, err := loadProvider(env, cwd, only)
			return err
		}
		providers = []config.Provider{p}
	}
	statuses := config.StatusOf(env, providers)

	// Ask the local servers what they serve, concurrently and briefly.
	served := make([][]string, len(statuses))
	reachable := make([]bool, len(statuses))
	var wg sync.WaitGroup
	for i, st := range statuses {
		if st.Provider.NeedsKey || !st.Configured {
			continue
		}
		wg.Go(func() {
			key, _ := config.Credential(env, st.Provider)
			served[i], reachable[i] = listServed(st.BaseURL, key)
		})
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
		ids := served[i]
		if !local {
			for _, e := range catalog.List(p.Name) {
				ids = append(ids, e.ID)
			}
			if len(ids) == 0 && p.DefaultModel != "" {
				ids = []string{p.DefaultModel}
			}
		}
		for _, id := range ids {
			e := catalog.Lookup(p.Name, id)
			fmt.Fprintf(tw, "  %s:%s\t%s\t%s\t%s\t%s\n", p.Name, id, contextText(e), tokens(int64(e.MaxOutput))+" out", priceText(e), features(e))
		}
		if len(ids) == 0 {
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

// listServed asks an OpenAI-compatible server for GET /models. It reports
// whether the server answered at all.
func listServed(baseURL, key string) ([]string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(baseURL, "/")+"/models", nil)
	if err != nil {
		return nil, false
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, false
	}
	defer res.Body.Close()
	var body struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if res.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(res.Body, 4<<20)).Decode(&body) != nil {
		return nil, true
	}
	var ids []string
	for _, d := range body.Data {
		ids = append(ids, d.ID)
	}
	return ids, true
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

// providerConfig is what llm.Open needs for provider:model, resolved from
// config (credentials, base URL, custom providers) and the catalog
// (context window, output limit, images, reasoning). Custom providers of
// file are registered with the openai package on the way. It fails with a
// how-to when the provider needs a key and has none.
func providerConfig(env config.Env, file *config.File, provider, model string) (llm.ProviderConfig, error) {
	p, ok := file.Provider(provider)
	if !ok {
		return llm.ProviderConfig{}, fmt.Errorf("unknown provider %q", provider)
	}
	if p.Custom {
		if err := registerCustom(p); err != nil {
			return llm.ProviderConfig{}, err
		}
	}
	registerModels(file)
	key, _ := config.Credential(env, p)
	if p.NeedsKey && key == "" {
		return llm.ProviderConfig{}, fmt.Errorf("no credentials for %s: set %s or run `corvid auth login %s`", p.DisplayName(), strings.Join(p.KeyVars, " or "), p.Name)
	}
	return llm.ProviderConfig{
		Provider: p.Name,
		Model:    model,
		APIKey:   key,
		BaseURL:  config.BaseURL(env, p),
		Info:     catalog.Lookup(p.Name, model).Info(),
		Headers:  p.Headers,

		IdleTimeout: config.StreamIdleTimeout(env),
	}, nil
}

// registerCustom makes a custom provider of config.toml buildable by
// llm.Open, through the package of its API family.
func registerCustom(p config.Provider) error {
	switch p.API {
	case config.APIAnthropic:
		llm.Register(p.Name, anthropic.New)
	case config.APIGemini:
		llm.Register(p.Name, func(cfg llm.ProviderConfig) (llm.Model, error) { return gemini.New(cfg, nil) })
	default:
		return openai.RegisterCustom(p)
	}
	return nil
}

// registerModels adds the models of file's [providers.NAME.models]
// tables to the catalog, so their context windows and prices apply.
func registerModels(file *config.File) {
	if file == nil {
		return
	}
	for name, s := range file.Providers {
		if p, ok := file.Provider(name); ok {
			name = p.Name
		}
		for _, m := range s.Models {
			e := catalog.Lookup(name, m.ID)
			e.Name = cmp.Or(m.Name, e.Name)
			if w := m.Window(); w > 0 {
				e.ContextWindow, e.ContextTiers = w, nil
			}
			if m.MaxOutput > 0 {
				e.MaxOutput = m.MaxOutput
			}
			e.Images = e.Images || m.Images
			e.Reasoning = e.Reasoning || m.Reasoning
			if m.Price != (config.ModelPrice{}) {
				e.Price = catalog.Price{Input: m.Price.Input, Output: m.Price.Output, CacheRead: m.Price.CacheRead, CacheWrite: m.Price.CacheWrite}
				e.PriceTiers = nil
			}
			catalog.Add(name, e)
		}
	}
}
