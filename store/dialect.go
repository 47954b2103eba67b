package store

import (
	"strconv"
	"strings"
	"sync"
)

// Engine names the database engine a DB runs on.
type Engine string

const (
	// SQLite is the embedded default: one file in the runtime home.
	SQLite Engine = "sqlite"
	// Postgres is a PostgreSQL server shared by several Hosts.
	Postgres Engine = "postgres"
)

// The store's statements are written once, in the SQL both engines run
// (ON CONFLICT upserts, RETURNING, COALESCE, CASE), with SQLite's '?' and
// '?N' placeholders. The dialect turns a statement text into the engine's
// form once per text (the result is cached); on SQLite it is the identity.
// What PostgreSQL cannot take mechanically is listed in pgStatements
// (dialect_postgres.go): the text SQLite runs maps to the one PostgreSQL
// runs.
type dialect struct {
	engine Engine

	mu    sync.Mutex // guards cache
	cache map[string]string
}

func newDialect(e Engine) *dialect { return &dialect{engine: e, cache: map[string]string{}} }

// sql returns q in the engine's form.
func (d *dialect) sql(q string) string {
	if d == nil || d.engine != Postgres {
		return q
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.cache[q]; ok {
		return s
	}
	s := toPostgres(q)
	if len(d.cache) < maxRewrites {
		d.cache[q] = s
	}
	return s
}

// maxRewrites bounds the cache: the store's texts are a fixed set plus the
// filter combinations of its lists.
const maxRewrites = 2048

// toPostgres rewrites one SQLite statement for PostgreSQL: a listed
// statement is replaced whole; otherwise ' INDEXED BY <index>' hints are
// dropped (PostgreSQL's planner picks the index) and placeholders are
// numbered ('?' → $n in order, '?N' → $N), outside quoted text.
func toPostgres(q string) string {
	if s, ok := pgStatements[q]; ok {
		q = s
	}
	q = dropIndexedBy(pgInsertOr(q))
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch c {
		case '\'', '"':
			j := strings.IndexByte(q[i+1:], c)
			if j < 0 {
				b.WriteString(q[i:])
				return b.String()
			}
			b.WriteString(q[i : i+j+2])
			i += j + 1
		case '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			b.WriteByte('$')
			if j > i+1 {
				b.WriteString(q[i+1 : j])
			} else {
				n++
				b.WriteString(strconv.Itoa(n))
			}
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func dropIndexedBy(q string) string {
	const hint = " INDEXED BY "
	for {
		i := strings.Index(q, hint)
		if i < 0 {
			return q
		}
		j := i + len(hint)
		for j < len(q) && (q[j] == '_' || q[j] >= 'a' && q[j] <= 'z' || q[j] >= 'A' && q[j] <= 'Z' || q[j] >= '0' && q[j] <= '9') {
			j++
		}
		q = q[:i] + q[j:]
	}
}
