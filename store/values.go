package store

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
)

var jsonBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// marshalJSON encodes v as compact JSON with sorted map keys and without
// HTML escaping. nil becomes "{}", because every JSON column holds an object.
func marshalJSON(v any) (string, error) {
	if v == nil {
		return "{}", nil
	}
	if m, ok := v.(map[string]any); ok && m == nil {
		return "{}", nil
	}
	buf := jsonBufs.Get().(*bytes.Buffer)
	defer jsonBufs.Put(buf)
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return string(bytes.TrimRight(buf.Bytes(), "\n")), nil
}

// decodeObject decodes a JSON object column; "" and "null" give nil.
func decodeObject(raw string) (map[string]any, error) {
	if raw == "" || raw == "null" {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, err
	}
	return m, nil
}

// objectOrCorrupt decodes raw for a typed read; undecodable JSON becomes
// {"_corrupt_json": raw} (spec host-runtime §1.2), as in generic queries.
func objectOrCorrupt(raw string) map[string]any {
	m, err := decodeObject(raw)
	if err != nil {
		return map[string]any{"_corrupt_json": raw}
	}
	return m
}

// payload reads typed values out of an event payload (or any JSON-shaped
// map). A key that is absent or null is "not given" for every accessor.
type payload map[string]any

func (p payload) has(k string) bool { return p[k] != nil }

// str returns the value of k as a string.
func (p payload) str(k string) string {
	switch v := p[k].(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return v.String()
	case fmt.Stringer:
		return v.String()
	default:
		return fmt.Sprint(v)
	}
}

// nstr returns k as a string, or nil when k is not given: the argument for
// an SQL COALESCE.
func (p payload) nstr(k string) any {
	if !p.has(k) {
		return nil
	}
	return p.str(k)
}

// strOr returns k as a string, or def when k is not given or empty.
func (p payload) strOr(k, def string) string {
	if s := p.str(k); s != "" {
		return s
	}
	return def
}

// num returns k as an integer and whether it was given as one.
func (p payload) num(k string) (int64, bool) {
	switch v := p[k].(type) {
	case int:
		return int64(v), true
	case int64:
		return v, true
	case int32:
		return int64(v), true
	case uint32:
		return int64(v), true
	case uint64:
		return int64(v), true
	case float64:
		return int64(v), true
	case float32:
		return int64(v), true
	case json.Number:
		n, err := v.Int64()
		if err != nil {
			f, ferr := v.Float64()
			return int64(f), ferr == nil
		}
		return n, true
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// nnum returns k as an integer, or nil when not given.
func (p payload) nnum(k string) any {
	if n, ok := p.num(k); ok {
		return n
	}
	return nil
}

// boolean returns k as a bool, or def when k is not given.
func (p payload) boolean(k string, def bool) bool {
	switch v := p[k].(type) {
	case bool:
		return v
	case string:
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	case float64:
		return v != 0
	case int:
		return v != 0
	case int64:
		return v != 0
	}
	return def
}

// obj returns k as a map (nil when not an object).
func (p payload) obj(k string) map[string]any {
	switch v := p[k].(type) {
	case map[string]any:
		return v
	case payload:
		return v
	}
	return nil
}

// ntime returns k as a storage timestamp, or nil when not given. Parseable
// times are normalised to demiurge.TimeLayout so text comparison orders them;
// anything else is kept verbatim.
func (p payload) ntime(k string) any {
	switch v := p[k].(type) {
	case nil:
		return nil
	case time.Time:
		if v.IsZero() {
			return nil
		}
		return demiurge.FormatTime(v)
	case string:
		if v == "" {
			return nil
		}
		if t := demiurge.ParseTime(v); !t.IsZero() {
			return demiurge.FormatTime(t)
		}
		return v
	default:
		return p.str(k)
	}
}

// njson returns k encoded as JSON, or nil when not given.
func (p payload) njson(k string) (any, error) {
	if !p.has(k) {
		return nil, nil
	}
	return marshalJSON(p[k])
}

// jsonOr returns k encoded as JSON, or "{}" when not given.
func (p payload) jsonOr(k string) (string, error) {
	if !p.has(k) {
		return "{}", nil
	}
	return marshalJSON(p[k])
}

// nullable turns "" into SQL NULL.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// ns reads a nullable TEXT column.
type ns = sql.NullString

func parseTime(n ns) time.Time { return demiurge.ParseTime(n.String) }

// truncateRunes cuts s to at most n runes.
func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// isNoRows reports whether err is sql.ErrNoRows.
func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// placeholders returns "?, ?, ?" for n arguments.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}
