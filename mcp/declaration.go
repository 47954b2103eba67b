package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/internal/yamlx"
	"github.com/demiurge/demiurge/policy"
)

// Transports a declaration may name.
const (
	TransportStdio          = "stdio"
	TransportStreamableHTTP = "streamable_http"
)

// Defaults of a declaration.
const (
	DefaultConnectTimeout = 30 * time.Second
	DefaultCallTimeout    = 60 * time.Second
	// maxTimeoutSeconds bounds both timeouts: a larger value is a typo, and
	// it would overflow a time.Duration long before it meant anything.
	maxTimeoutSeconds = 86400
)

// Declaration is one agent/mcp/<server_id>.yaml, decoded and checked. It
// holds the declared values only: ${NAME} references in Env and Headers
// are interpolated from the Host environment after connect approval
// (HostVariables names them), and Cwd is resolved against the turn's
// workspace then. The URL is used as written: a ${NAME} in it is an
// error.
type Declaration struct {
	ID      string // the file stem
	Path    string // absolute path of the file
	RelPath string // slash path relative to the core directory, as messages name it

	Enabled        bool
	Transport      string // TransportStdio or TransportStreamableHTTP
	Command        string
	Args           []string
	Env            map[string]string
	Cwd            string // as declared; "" means the workspace
	URL            string
	Headers        map[string]string
	Include        []string // tools.include patterns, trimmed and de-duplicated
	Exclude        []string // tools.exclude patterns
	Risk           string
	ApprovalPolicy string // the call policy
	Capability     string // the call capability, default mcp.call:<ID>

	ConnectTimeout            time.Duration
	CallTimeout               time.Duration
	SupportsParallelToolCalls bool // parsed, unused

	// Raw is the file as read; Fingerprint is the hex SHA-256 of
	// {server_id, relative_path, raw_manifest}. A changed fingerprint
	// closes the server's connection and asks for connect approval again.
	Raw         []byte
	Fingerprint string
}

// ConnectCapability is the capability that authorises connecting to the
// server and discovering its tools: mcp.connect:<ID>.
func (d Declaration) ConnectCapability() string { return "mcp.connect:" + d.ID }

// declFile is the file's schema; any other key is an error.
type declFile struct {
	Enabled                   *bool             `yaml:"enabled"`
	Transport                 *string           `yaml:"transport"`
	Command                   *string           `yaml:"command"`
	Args                      []string          `yaml:"args"`
	Env                       map[string]string `yaml:"env"`
	Cwd                       *string           `yaml:"cwd"`
	URL                       *string           `yaml:"url"`
	Headers                   map[string]string `yaml:"headers"`
	Tools                     *toolFilters      `yaml:"tools"`
	Risk                      *string           `yaml:"risk"`
	ApprovalPolicy            *string           `yaml:"approval_policy"`
	Capability                *string           `yaml:"capability"`
	ConnectTimeoutSeconds     *float64          `yaml:"connect_timeout_seconds"`
	TimeoutSeconds            *float64          `yaml:"timeout_seconds"`
	SupportsParallelToolCalls *bool             `yaml:"supports_parallel_tool_calls"`
}

type toolFilters struct {
	Include []string `yaml:"include"`
	Exclude []string `yaml:"exclude"`
}

var (
	envNamePattern    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	headerNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$") })
)

// LoadCore loads the declarations of a loaded core: LoadDeclarations of its
// MCP root (slots.mcp, default <surface>/mcp), named relative to the core
// directory.
func LoadCore(c *core.Core) ([]Declaration, error) {
	return LoadDeclarations(c.MCPDir(), c.Dir)
}

// LoadDeclarations reads every <id>.yaml and <id>.yml directly in dir,
// sorted by file name, and decodes each strictly. A missing dir declares
// nothing. relTo is the directory messages and fingerprints name files
// relative to (the core directory); "" means dir's parent.
//
// Errors are ECONFIG and read "invalid MCP server <rel>: <what>"; when the
// problem has a line, <what> starts with "<rel>:<line>: " and names the
// key. Two files with one stem fail with "duplicate MCP server id".
func LoadDeclarations(dir, relTo string) ([]Declaration, error) {
	if relTo == "" {
		relTo = filepath.Dir(dir)
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, demiurge.WrapError(demiurge.ECONFIG, err, "MCP declarations %s: cannot read the directory: %s", relPath(relTo, dir), demiurge.IOReason(err))
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		ext := filepath.Ext(name)
		if strings.HasPrefix(name, ".") || (ext != ".yaml" && ext != ".yml") {
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	var out []Declaration
	seen := map[string]string{}
	for _, name := range names {
		path := filepath.Join(dir, name)
		rel := relPath(relTo, path)
		id := strings.TrimSuffix(name, filepath.Ext(name))
		if prior, dup := seen[id]; dup {
			return nil, declError(rel, 0, "duplicate MCP server id %s (also declared by %s)", id, prior)
		}
		seen[id] = rel
		d, err := loadDeclaration(path, rel, id)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// loadDeclaration reads and decodes one declaration file.
func loadDeclaration(path, rel, id string) (Declaration, error) {
	if err := checkServerID(id); err != "" {
		return Declaration{}, declError(rel, 0, "%s", err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return Declaration{}, declError(rel, 0, "cannot read the file: %s", demiurge.IOReason(err))
	}
	if !fi.Mode().IsRegular() {
		// A link could make the core's declaration read a file elsewhere.
		return Declaration{}, declError(rel, 0, "not a regular file")
	}
	if fi.Size() > yamlx.MaxBytes {
		return Declaration{}, declError(rel, 0, "file is larger than %d bytes", yamlx.MaxBytes)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return Declaration{}, declError(rel, 0, "cannot read the file: %s", demiurge.IOReason(err))
	}
	return ParseDeclaration(id, path, rel, raw)
}

// ParseDeclaration decodes raw as the declaration of server id, read from
// path (named rel in messages). It is LoadDeclarations for one file.
func ParseDeclaration(id, path, rel string, raw []byte) (Declaration, error) {
	if err := checkServerID(id); err != "" {
		return Declaration{}, declError(rel, 0, "%s", err)
	}
	doc, err := yamlx.Parse(rel, raw)
	if err != nil {
		return Declaration{}, wrapYAML(rel, err)
	}
	var f declFile
	if err := doc.Decode(&f); err != nil {
		return Declaration{}, wrapYAML(rel, err)
	}
	d := Declaration{
		ID: id, Path: path, RelPath: rel, Raw: append([]byte(nil), raw...),
		Enabled: true, Transport: TransportStdio,
		Env: map[string]string{}, Headers: map[string]string{}, Args: []string{},
		Risk: string(policy.RiskMedium), ApprovalPolicy: string(policy.Prompt),
		Capability:     "mcp.call:" + id,
		ConnectTimeout: DefaultConnectTimeout, CallTimeout: DefaultCallTimeout,
	}
	line := func(keys ...string) int { return doc.Line(keys...) }
	if f.Enabled != nil {
		d.Enabled = *f.Enabled
	}
	if f.Transport != nil {
		d.Transport = strings.TrimSpace(*f.Transport)
		if d.Transport != TransportStdio && d.Transport != TransportStreamableHTTP {
			return d, declError(rel, line("transport"), "transport must be %s or %s, got %s", TransportStdio, TransportStreamableHTTP, strconv.Quote(*f.Transport))
		}
	}
	if f.Command != nil {
		d.Command = strings.TrimSpace(*f.Command)
	}
	if f.Args != nil {
		d.Args = append([]string{}, f.Args...)
	}
	for k, v := range f.Env {
		if !envNamePattern().MatchString(k) {
			return d, declError(rel, line("env", k), "env name %s is not a valid environment variable name", strconv.Quote(k))
		}
		d.Env[k] = v
	}
	if f.Cwd != nil {
		d.Cwd = strings.TrimSpace(*f.Cwd)
	}
	if f.URL != nil {
		d.URL = strings.TrimSpace(*f.URL)
	}
	for k, v := range f.Headers {
		if !headerNamePattern().MatchString(k) {
			return d, declError(rel, line("headers", k), "header name %s is not a valid HTTP header name", strconv.Quote(k))
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return d, declError(rel, line("headers", k), "header %s value contains a line break or NUL", k)
		}
		d.Headers[k] = v
	}
	if f.Tools != nil {
		d.Include = cleanPatterns(f.Tools.Include)
		d.Exclude = cleanPatterns(f.Tools.Exclude)
	}
	if f.Risk != nil {
		r, err := policy.ParseRisk(*f.Risk)
		if err != nil {
			return d, declError(rel, line("risk"), "%s", demiurge.ErrorMessage(err))
		}
		d.Risk = string(r)
	}
	if f.ApprovalPolicy != nil {
		p, err := policy.ParsePolicy(*f.ApprovalPolicy)
		if err != nil {
			return d, declError(rel, line("approval_policy"), "%s", demiurge.ErrorMessage(err))
		}
		d.ApprovalPolicy = string(p)
	}
	if f.Capability != nil && strings.TrimSpace(*f.Capability) != "" {
		d.Capability = strings.TrimSpace(*f.Capability)
	}
	var err2 error
	if d.ConnectTimeout, err2 = seconds(f.ConnectTimeoutSeconds, DefaultConnectTimeout); err2 != nil {
		return d, declError(rel, line("connect_timeout_seconds"), "connect_timeout_seconds %v", err2)
	}
	if d.CallTimeout, err2 = seconds(f.TimeoutSeconds, DefaultCallTimeout); err2 != nil {
		return d, declError(rel, line("timeout_seconds"), "timeout_seconds %v", err2)
	}
	if f.SupportsParallelToolCalls != nil {
		d.SupportsParallelToolCalls = *f.SupportsParallelToolCalls
	}
	switch d.Transport {
	case TransportStdio:
		if d.Command == "" {
			return d, declError(rel, line("command"), "stdio MCP server requires command")
		}
		if strings.IndexByte(d.Command, 0) >= 0 {
			return d, declError(rel, line("command"), "command contains a NUL byte")
		}
		for i, a := range d.Args {
			if strings.IndexByte(a, 0) >= 0 {
				return d, declError(rel, line("args", strconv.Itoa(i)), "args[%d] contains a NUL byte", i)
			}
		}
		for k, v := range d.Env {
			if strings.IndexByte(v, 0) >= 0 {
				return d, declError(rel, line("env", k), "env %s contains a NUL byte", k)
			}
		}
	case TransportStreamableHTTP:
		if d.URL == "" {
			return d, declError(rel, line("url"), "streamable_http MCP server requires url")
		}
		if !strings.HasPrefix(d.URL, "http://") && !strings.HasPrefix(d.URL, "https://") {
			return d, declError(rel, line("url"), "streamable_http MCP server url must start with http:// or https://")
		}
		if m := refPattern().FindStringSubmatch(d.URL); m != nil {
			// The URL is judged and approved as written; a Host variable in
			// it would be sent literally, or, interpolated, reach the URL
			// policy and every audit view.
			return d, declError(rel, line("url"), "url references ${%s}: only env and header values are interpolated from the Host environment (send a credential in a header)", m[1])
		}
	}
	d.Fingerprint = serverFingerprint(d.ID, d.RelPath, raw)
	return d, nil
}

// checkServerID refuses ids that would change the meaning of the
// capabilities named after them: a ':' would nest under another server's
// wildcard, a '*' would read as one, and space or control characters have
// no place in a grant key.
func checkServerID(id string) string {
	if id == "" {
		return "empty MCP server id (the file name has no stem)"
	}
	for _, r := range id {
		if r == ':' || r == '*' || r <= ' ' || r == 0x7f {
			return fmt.Sprintf("MCP server id %s may not contain ':', '*', spaces or control characters", strconv.Quote(id))
		}
	}
	return ""
}

// seconds converts an optional positive number of seconds.
func seconds(v *float64, def time.Duration) (time.Duration, error) {
	if v == nil {
		return def, nil
	}
	s := *v
	if math.IsNaN(s) || s <= 0 {
		return 0, fmt.Errorf("must be greater than 0, got %s", formatSeconds(s))
	}
	if s > maxTimeoutSeconds {
		return 0, fmt.Errorf("must be at most %d, got %s", maxTimeoutSeconds, formatSeconds(s))
	}
	return time.Duration(s * float64(time.Second)), nil
}

// formatSeconds renders a number of seconds the way the file wrote it:
// 30, not 30.000000.
func formatSeconds(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) }

// cleanPatterns trims patterns and drops empty and repeated ones, keeping
// the first occurrence's order.
func cleanPatterns(in []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, p := range in {
		p = strings.TrimSpace(p)
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// serverFingerprint is the identity of one declaration's contents.
func serverFingerprint(id, rel string, raw []byte) string {
	b, _ := json.Marshal(struct {
		ID   string `json:"server_id"`
		Path string `json:"relative_path"`
		Raw  string `json:"raw_manifest"`
	}{id, rel, string(raw)})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// declError is an ECONFIG error "invalid MCP server <rel>: [<rel>:<line>: ]<what>".
func declError(rel string, line int, format string, args ...any) *demiurge.Error {
	what := fmt.Sprintf(format, args...)
	if line > 0 {
		what = fmt.Sprintf("%s:%d: %s", rel, line, what)
	}
	return &demiurge.Error{Code: demiurge.ECONFIG, Message: "invalid MCP server " + rel + ": " + what}
}

// wrapYAML prefixes a yamlx error (already "<rel>:<line>: <what>").
func wrapYAML(rel string, err error) error {
	return &demiurge.Error{Code: demiurge.ECONFIG, Message: "invalid MCP server " + rel + ": " + demiurge.ErrorMessage(err), Err: err}
}

func relPath(base, p string) string {
	r, err := filepath.Rel(base, p)
	if err != nil || strings.HasPrefix(r, "..") {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(r)
}
