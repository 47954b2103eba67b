package turn

import (
	"reflect"
	"strconv"
	"sync"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/tokens"
)

// Safety margins of the input budget, as a share of the window: smaller
// with the model's own tokenizer than with the estimate, smaller again
// once the session's reported usage has calibrated the count.
const (
	marginExact      = 0.03
	marginEstimate   = 0.10
	marginCalibrated = 0.05
	marginFloor      = 64
)

// compactThreshold is the share of the input budget past which the
// history is compacted before the turn's first model call.
const compactThreshold = 0.75

// window is the token budget of one model call: the context window less
// the output reserve (the max_tokens sent) and a safety margin, counted
// with the model's tokenizer or the estimate, calibrated per session.
type window struct {
	limits  demiurge.ModelLimits
	counter tokens.Counter
	calib   *tokens.Calibration
	reserve int
}

// newWindow applies the core's overrides (model.context_window; a
// positive max_tokens or max_output_tokens in model.model_options) to the
// profile's limits. The output reserve is the output limit, at most half
// the window.
func newWindow(limits demiurge.ModelLimits, m core.ModelConfig, calib *tokens.Calibration) (*window, error) {
	if m.ContextWindow > 0 {
		limits.ContextWindow = m.ContextWindow
	}
	for _, k := range []string{"max_tokens", "max_output_tokens"} {
		if n, ok := positiveInt(m.ModelOptions[k]); ok {
			limits.MaxOutputTokens = n
			break
		}
	}
	if limits.ContextWindow < core.MinContextWindow {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "model.context_window: %d is below the minimal context of %d tokens", limits.ContextWindow, core.MinContextWindow)
	}
	reserve := min(max(limits.MaxOutputTokens, 1), limits.ContextWindow/2)
	if calib == nil {
		calib = &tokens.Calibration{}
	}
	return &window{limits: limits, counter: tokens.For(limits.Tokenizer), calib: calib, reserve: reserve}, nil
}

// margin is the safety margin in tokens.
func (w *window) margin() int {
	share := marginEstimate
	switch {
	case w.counter.Exact():
		share = marginExact
	case w.calib.Observed():
		share = marginCalibrated
	}
	return int(float64(w.limits.ContextWindow)*share) + marginFloor
}

// budget is the most input tokens a request may take.
func (w *window) budget() int { return w.limits.ContextWindow - w.reserve - w.margin() }

// scaled is a raw count corrected by the calibration.
func (w *window) scaled(n int) int { return w.calib.Apply(n) }

// overflow is the typed failure of a request that cannot fit.
func (w *window) overflow(what string, need int) error {
	return demiurge.Errorf(demiurge.ECONTEXTOVERFLOW,
		"%s needs %d tokens but the input budget is %d (context window %d - output reserve %d - safety margin %d): over by %d tokens",
		what, need, w.budget(), w.limits.ContextWindow, w.reserve, w.margin(), need-w.budget())
}

func positiveInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, n > 0
	case int64:
		return int(n), n > 0
	case uint64:
		return int(n), n > 0
	case float64:
		return int(n), n > 0 && n == float64(int(n))
	}
	return 0, false
}

// calibrations keeps one calibration per session and model, so a model
// switch starts afresh; bounded, an evicted session starts afresh too.
type calibrations struct {
	mu sync.Mutex // guards m
	m  map[string]*tokens.Calibration
}

const maxCalibrations = 1024

func (c *calibrations) of(sessionID, model string) *tokens.Calibration {
	key := sessionID + "\x00" + model
	c.mu.Lock()
	defer c.mu.Unlock()
	if cal, ok := c.m[key]; ok {
		return cal
	}
	if c.m == nil || len(c.m) >= maxCalibrations {
		c.m = map[string]*tokens.Calibration{}
	}
	cal := &tokens.Calibration{}
	c.m[key] = cal
	return cal
}

// countCache keeps the raw token count of persisted messages by counter
// and message id (a message is immutable; an edit gives it new text, and
// the text length is part of the key), and of tool definitions by counter
// and definition (toolKey). Bounded: when full it starts over.
type countCache struct {
	mu    sync.Mutex // guards m, tools
	m     map[string]int
	tools map[toolKey]toolCount
}

// toolKey names a tool definition by its schema's identity: a catalog's
// definitions are kept per core revision, so the same schema map comes
// back step after step and turn after turn. The entry holds the schema
// (toolCount), so no other map can take its address while it is cached.
type toolKey struct {
	counter, name, description string
	schema                     uintptr
}

type toolCount struct {
	n      int
	schema map[string]any
}

// tool returns the count of a tool definition, counting it on a miss.
func (c *countCache) tool(counter tokens.Counter, t demiurge.ToolSpec) int {
	key := toolKey{counter: counter.Name(), name: t.Name, description: t.Description, schema: reflect.ValueOf(t.InputSchema).Pointer()}
	c.mu.Lock()
	got, ok := c.tools[key]
	c.mu.Unlock()
	if ok {
		return got.n
	}
	n := tokens.Tool(counter, t.Name, t.Description, t.InputSchema)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tools == nil || len(c.tools) >= maxCachedCounts {
		c.tools = make(map[toolKey]toolCount, 64)
	}
	c.tools[key] = toolCount{n: n, schema: t.InputSchema}
	return n
}

const maxCachedCounts = 1 << 16

func (c *countCache) get(key string) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.m[key]
	return n, ok
}

func (c *countCache) put(key string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedCounts {
		c.m = make(map[string]int, 1024)
	}
	c.m[key] = n
}

func countKey(counter tokens.Counter, id string, textLen int, stub bool) string {
	kind := "\x00m\x00"
	if stub {
		kind = "\x00s\x00"
	}
	return counter.Name() + "\x00" + id + kind + strconv.Itoa(textLen)
}
