// Package testserver is an MCP server built on the same SDK as the Host's
// client, with fault modes, for the mcp package's tests and benchmarks.
// The command in cmd/mcptestserver runs it over stdio (or streamable HTTP);
// tests also mount New's server on an httptest listener.
//
// It is test code: nothing in the Host imports it.
package testserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Modes of the server.
const (
	ModeHealthy        = "healthy"
	ModeHangInitialize = "hang-initialize" // never answers anything
	ModeHangList       = "hang-list"       // answers initialize, never tools/list
	ModeMalformed      = "malformed"       // answers the first line with garbage
	ModeBadSchema      = "bad-schema"      // one tool's input schema does not compile
	ModeCollide        = "collide"         // tool names that normalise alike
	ModeFloodStderr    = "flood-stderr"    // writes FloodBytes to stderr before serving
)

// FloodBytes is how much ModeFloodStderr writes to stderr.
const FloodBytes = 4 << 20

// Config selects the server's behaviour.
type Config struct {
	Mode string
	// Tools adds this many trivial tools t000, t001, ...
	Tools int
	// StateDir, when set, receives files the tests read: "started" (one
	// line with the pid per start, written first thing), "cancelled-<tag>"
	// (a sleep call saw its context cancelled), "child.pid" (the spawn
	// tool's grandchild).
	StateDir string
	// InitDelay delays the answer to initialize (benchmarks).
	InitDelay time.Duration
}

// New returns the MCP server of cfg (healthy behaviour plus the mode's
// tools; the wire-level faults live in RunStdio).
func New(cfg Config) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "demiurge-testserver", Version: "1"}, nil)
	if cfg.InitDelay > 0 {
		s.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
			return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
				if method == "initialize" {
					time.Sleep(cfg.InitDelay)
				}
				return next(ctx, method, req)
			}
		})
	}
	if cfg.Mode == ModeHangList {
		s.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
			return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
				if method == "tools/list" {
					select {} // never answers, even when cancelled
				}
				return next(ctx, method, req)
			}
		})
	}
	obj := func(props map[string]any) map[string]any {
		if props == nil {
			props = map[string]any{}
		}
		return map[string]any{"type": "object", "properties": props}
	}
	add := func(name, desc string, schema map[string]any, h sdk.ToolHandler) {
		s.AddTool(&sdk.Tool{Name: name, Description: desc, InputSchema: schema}, h)
	}
	add("echo", "Echoes its text.", obj(map[string]any{"text": map[string]any{"type": "string"}}), func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return text("echo: " + str(args(r)["text"])), nil
	})
	add("env", "Returns the environment.", obj(nil), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		env := os.Environ()
		sort.Strings(env)
		b, _ := json.Marshal(env)
		return text(string(b)), nil
	})
	add("pwd", "Returns the working directory.", obj(nil), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		wd, _ := os.Getwd()
		return text(wd), nil
	})
	add("sleep", "Sleeps ms milliseconds.", obj(map[string]any{"ms": map[string]any{"type": "number"}, "tag": map[string]any{"type": "string"}}), func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		a := args(r)
		ms, _ := a["ms"].(float64)
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
			return text("slept"), nil
		case <-ctx.Done():
			writeState(cfg.StateDir, "cancelled-"+str(a["tag"]), "1")
			return nil, ctx.Err()
		}
	})
	add("structured", "Returns structured content.", obj(nil), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: `{"answer":42}`}},
			StructuredContent: map[string]any{"answer": 42, "items": []any{"a", "b"}},
		}, nil
	})
	add("media", "Returns an image, a link and a resource.", obj(nil), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.TextContent{Text: "look:"},
			&sdk.ImageContent{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
			&sdk.ResourceLink{URI: "file:///doc.txt", Title: "Doc"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://r", Text: "inline resource"}},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://blob", Blob: []byte{1, 2}}},
		}}, nil
	})
	add("fail", "Reports an error.", obj(nil), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "it failed"}}}, nil
	})
	add("empty", "Returns nothing.", obj(nil), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{}, nil
	})
	add("big", "Returns n characters.", obj(map[string]any{"n": map[string]any{"type": "number"}}), func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		n, _ := args(r)["n"].(float64)
		return text(strings.Repeat("x", int(n))), nil
	})
	add("getenv", "Returns one variable.", obj(map[string]any{"name": map[string]any{"type": "string"}}), func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return text(os.Getenv(str(args(r)["name"]))), nil
	})
	add("crash", "Exits mid-call.", obj(nil), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		os.Exit(3)
		return nil, nil
	})
	add("protocol_error", "Fails at the protocol level.", obj(nil), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return nil, fmt.Errorf("boom with token=%s", os.Getenv("DEMO_TOKEN"))
	})
	add("spawn", "Starts a grandchild that sleeps.", obj(nil), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		cmd := exec.Command("sleep", "1000")
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		writeState(cfg.StateDir, "child.pid", strconv.Itoa(cmd.Process.Pid))
		return text(strconv.Itoa(cmd.Process.Pid)), nil
	})
	add("add_tool", "Adds a tool named name.", obj(map[string]any{"name": map[string]any{"type": "string"}}), func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		name := str(args(r)["name"])
		s.AddTool(&sdk.Tool{Name: name, InputSchema: obj(nil)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text("added tool " + name), nil
		})
		return text("added " + name), nil
	})
	for i := 0; i < cfg.Tools; i++ {
		name := fmt.Sprintf("t%03d", i)
		add(name, "Trivial tool "+name+".", obj(map[string]any{"x": map[string]any{"type": "string"}}), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text(name), nil
		})
	}
	switch cfg.Mode {
	case ModeBadSchema:
		add("bad_schema", "Its schema does not compile.", map[string]any{
			"type": "object", "properties": map[string]any{"x": map[string]any{"type": "nonsense"}},
		}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("never"), nil })
	case ModeCollide:
		for _, name := range []string{"a.b", "a-b", "A-B", "9lives", strings.Repeat("long", 20)} {
			add(name, "", obj(nil), func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return text(name), nil
			})
		}
	}
	return s
}

// RunStdio serves cfg over stdin/stdout until the client goes away.
func RunStdio(ctx context.Context, cfg Config) error {
	appendState(cfg.StateDir, "started", strconv.Itoa(os.Getpid())+"\n")
	switch cfg.Mode {
	case ModeHangInitialize:
		go func() { _, _ = io.Copy(io.Discard, os.Stdin) }()
		select {}
	case ModeMalformed:
		r := bufio.NewReader(os.Stdin)
		if _, err := r.ReadString('\n'); err != nil {
			return err
		}
		fmt.Fprintln(os.Stdout, "{this is not json-rpc")
		_, _ = io.Copy(io.Discard, r)
		return nil
	case ModeFloodStderr:
		chunk := []byte(strings.Repeat("e", 1023) + "\n")
		fmt.Fprintf(os.Stderr, "token in stderr: %s\n", os.Getenv("DEMO_TOKEN"))
		for n := 0; n < FloodBytes; n += len(chunk) {
			if _, err := os.Stderr.Write(chunk); err != nil {
				return err
			}
		}
	}
	fmt.Fprintln(os.Stderr, "testserver: serving on stdio")
	return New(cfg).Run(ctx, &sdk.StdioTransport{})
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

func args(r *sdk.CallToolRequest) map[string]any {
	var m map[string]any
	if r != nil && r.Params != nil {
		_ = json.Unmarshal(r.Params.Arguments, &m)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m
}

func str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}

func writeState(dir, name, value string) {
	if dir == "" {
		return
	}
	_ = os.WriteFile(filepath.Join(dir, name), []byte(value), 0o600)
}

func appendState(dir, name, value string) {
	if dir == "" {
		return
	}
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	_, _ = f.WriteString(value)
	_ = f.Close()
}
