package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/tool"
)

// ResourceToolName is the tool through which the model lists and reads the
// servers' resources (and the resource links tools return).
const ResourceToolName = "mcp_resource"

// resourceTool lists and reads the resources of the manager's servers.
type resourceTool struct{ m *Manager }

var _ tool.PermissionNamer = resourceTool{}

func (resourceTool) Name() string           { return ResourceToolName }
func (resourceTool) PermissionName() string { return "mcp_resource" }

func (t resourceTool) Description() string {
	var names []string
	for _, c := range t.m.conns {
		if c.offersResources() {
			names = append(names, fmt.Sprintf("%q", c.srv.Name))
		}
	}
	return "Lists or reads the resources of the session's MCP servers (" + strings.Join(names, ", ") + "). " +
		"Without uri: lists the server's resources and resource templates (fill a template's {placeholders} to make a uri). " +
		"With uri: reads that resource, including a resource link a tool returned."
}

func (resourceTool) InputSchema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"server":{"type":"string","description":"The MCP server's name."},` +
		`"uri":{"type":"string","description":"The resource to read; omit to list the server's resources."}},` +
		`"required":["server"]}`)
}

type resourceInput struct {
	Server string `json:"server"`
	URI    string `json:"uri"`
}

// Describe: reading resources asks like any MCP call; it changes nothing,
// so plan mode lets it through to the question.
func (resourceTool) Describe(env *tool.Env, input json.RawMessage) tool.Preview {
	var in resourceInput
	_ = json.Unmarshal(input, &in)
	title := fmt.Sprintf("%s: list resources", in.Server)
	if in.URI != "" {
		title = fmt.Sprintf("%s: read %s", in.Server, in.URI)
	}
	return tool.Preview{Kind: tool.KindRead, Title: title, Access: tool.AccessExecute, DeclaredReadOnly: true}
}

func (t resourceTool) Run(ctx context.Context, env *tool.Env, call tool.Call) (tool.Result, error) {
	var in resourceInput
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return tool.ErrorResult(fmt.Sprintf("the input of %s must be a JSON object: %v", ResourceToolName, err)), nil
	}
	c := t.m.conn(in.Server)
	if c == nil || !c.offersResources() {
		var names []string
		for _, c := range t.m.conns {
			if c.offersResources() {
				names = append(names, c.srv.Name)
			}
		}
		return tool.ErrorResult(fmt.Sprintf("no MCP server named %q offers resources; these do: %s", in.Server, strings.Join(names, ", "))), nil
	}
	if in.URI == "" {
		return c.listResources(), nil
	}
	res, err := c.readResource(ctx, in.URI)
	if ctx.Err() != nil {
		return tool.Result{}, ctx.Err()
	}
	if err != nil {
		return tool.ErrorResult(err.Error()), nil
	}
	return resourceResult(res, env != nil && env.Images), nil
}

// offersResources reports whether the live server has resources.
func (c *conn) offersResources() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.up() && (len(c.resources) > 0 || len(c.templates) > 0)
}

// listResources words the server's last lists for the model.
func (c *conn) listResources() tool.Result {
	c.mu.Lock()
	resources, templates := slices.Clone(c.resources), slices.Clone(c.templates)
	c.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "MCP server %q has %d resources", c.srv.Name, len(resources))
	if len(resources) == maxResourcesListed {
		b.WriteString(" (the first ones only)")
	}
	b.WriteString(":\n")
	for _, r := range resources {
		fmt.Fprintf(&b, "- %s", r.URI)
		if name := cmp.Or(r.Title, r.Name); name != "" && name != r.URI {
			fmt.Fprintf(&b, " (%s)", name)
		}
		if r.MIMEType != "" {
			fmt.Fprintf(&b, " [%s]", r.MIMEType)
		}
		if r.Description != "" {
			fmt.Fprintf(&b, ": %s", oneLine(r.Description))
		}
		b.WriteString("\n")
	}
	if len(templates) > 0 {
		fmt.Fprintf(&b, "Resource templates (fill the {placeholders}):\n")
		for _, r := range templates {
			fmt.Fprintf(&b, "- %s", r.URITemplate)
			if name := cmp.Or(r.Title, r.Name); name != "" {
				fmt.Fprintf(&b, " (%s)", name)
			}
			if r.Description != "" {
				fmt.Fprintf(&b, ": %s", oneLine(r.Description))
			}
			b.WriteString("\n")
		}
	}
	out := clip(strings.TrimRight(b.String(), "\n"))
	return tool.Result{Output: out, Content: []tool.Content{{Type: tool.ContentText, Text: out}}}
}

// resourceResult turns read contents into a result: text stays text, an
// image is an image, other binary data is only described.
func resourceResult(r *readResourceResult, images bool) tool.Result {
	var res tool.Result
	var parts []string
	for _, c := range r.Contents {
		if c == nil {
			continue
		}
		switch {
		case c.Text != "" || len(c.Blob) == 0:
			parts = append(parts, fmt.Sprintf("Resource %s:\n%s", c.URI, c.Text))
			res.Content = append(res.Content, tool.Content{Type: tool.ContentText, Text: clip(c.Text)})
		case strings.HasPrefix(c.MIMEType, "image/"):
			res.Images = append(res.Images, llm.Part{Type: llm.PartImage, MimeType: c.MIMEType, Data: c.Blob})
			res.Content = append(res.Content, tool.Content{Type: tool.ContentImage, MimeType: c.MIMEType, Data: c.Blob})
			note := fmt.Sprintf("[image %s: %s, %d bytes]", c.URI, c.MIMEType, len(c.Blob))
			if !images {
				note = fmt.Sprintf("[image %s: %s, %d bytes, not shown: this model does not accept images]", c.URI, c.MIMEType, len(c.Blob))
			}
			parts = append(parts, note)
		default:
			note := fmt.Sprintf("[resource %s: %s, %d bytes of binary data, not shown]", c.URI, cmp.Or(c.MIMEType, "unknown type"), len(c.Blob))
			parts = append(parts, note)
			res.Content = append(res.Content, tool.Content{Type: tool.ContentText, Text: note})
		}
	}
	res.Output = clip(strings.Join(parts, "\n"))
	if res.Output == "" {
		res.Output = "(the resource is empty)"
		res.Content = append(res.Content, tool.Content{Type: tool.ContentText, Text: res.Output})
	}
	return res
}

// ReadResource reads uri from the live server that lists it (or whose
// resource template it fits), for an editor's mention of an MCP resource.
// ok is false when no server claims the uri. The text is bounded; binary
// contents are described, not included.
func (m *Manager) ReadResource(ctx context.Context, uri string) (text, server string, ok bool, err error) {
	if m == nil {
		return "", "", false, nil
	}
	c := m.resourceOwner(uri)
	if c == nil {
		return "", "", false, nil
	}
	res, err := c.readResource(ctx, uri)
	if err != nil {
		return "", c.srv.Name, true, err
	}
	return resourceResult(res, false).Output, c.srv.Name, true, nil
}

// resourceOwner is the server listing uri, else one with a template whose
// fixed prefix uri starts with (the longest such prefix wins).
func (m *Manager) resourceOwner(uri string) *conn {
	var best *conn
	bestLen := 0
	for _, c := range m.conns {
		if !c.offersResources() {
			continue
		}
		c.mu.Lock()
		for _, r := range c.resources {
			if r.URI == uri {
				c.mu.Unlock()
				return c
			}
		}
		for _, t := range c.templates {
			prefix, _, _ := strings.Cut(t.URITemplate, "{")
			if prefix != "" && strings.HasPrefix(uri, prefix) && len(prefix) > bestLen {
				best, bestLen = c, len(prefix)
			}
		}
		c.mu.Unlock()
	}
	return best
}
