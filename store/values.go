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
// {"_corrupt_json": raw}, as in generic queries.
func objectOrCorrupt(raw string) map[string]any {
	m, err := decodeObject(raw)
	if err != nil {
		return map[string]any{"_corrupt_json": raw}
	}
	return m
}

// jsonObject reads typed values out of a decoded JSON column (a session's
// target). A key that is absent or null is "not given" for every accessor.
type jsonObject map[string]any

func (p jsonObject) has(k string) bool { return p[k] != nil }

// str returns the value of k as a string.
func (p jsonObject) str(k string) string {
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

// num returns k as an integer and whether it was given as one.
func (p jsonObject) num(k string) (int64, bool) {
	switch v := p[k].(type) {
	case int:
		return int64(v), true
	case int64:
		return v, true
	case float64:
		return int64(v), true
	case json.Number:
		n, err := v.Int64()
		return n, err == nil
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// boolean returns k as a bool, or def when k is not given.
func (p jsonObject) boolean(k string, def bool) bool {
	switch v := p[k].(type) {
	case bool:
		return v
	case string:
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	}
	return def
}

// obj returns k as a map (nil when not an object).
func (p jsonObject) obj(k string) map[string]any {
	m, _ := p[k].(map[string]any)
	return m
}

// storedTime returns a payload time in storage form, or nil when not
// given: parseable times are normalised to demiurge.TimeLayout, so text
// comparison orders them; anything else is kept verbatim.
func storedTime(s string) any {
	if s == "" {
		return nil
	}
	if t := demiurge.ParseTime(s); !t.IsZero() {
		return demiurge.FormatTime(t)
	}
	return s
}

// optionalInt is *n, or nil when not given: the argument for an SQL
// COALESCE.
func optionalInt(n *int) any {
	if n == nil {
		return nil
	}
	return *n
}

// optionalJSON is v encoded, or nil when not given.
func optionalJSON(v any, given bool) (any, error) {
	if !given {
		return nil, nil
	}
	return marshalJSON(v)
}

// objectJSON is v encoded, or "{}" when not given.
func objectJSON(v any, given bool) (string, error) {
	if !given {
		return "{}", nil
	}
	return marshalJSON(v)
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

// boolInt is b as the 0/1 an INTEGER column keeps (PostgreSQL does not
// take a bool for one).
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
