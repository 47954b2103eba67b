package store

import (
	"context"
	"database/sql"
	"sync"
)

// maxReadStmts bounds the prepared read statements: the store's reads are
// a fixed set of texts (and a few filter combinations); a generic Query of
// yet another text beyond the bound runs unprepared.
const maxReadStmts = 512

// readPool is the pool of query_only connections with each read statement
// prepared once and reused: preparing a statement costs more than running
// most of the store's reads. It is safe for concurrent use.
type readPool struct {
	*sql.DB
	d *dialect // the texts are rewritten for the engine before use

	mu    sync.Mutex // guards stmts
	stmts map[string]*sql.Stmt
}

func newReadPool(db *sql.DB, d *dialect) *readPool {
	return &readPool{DB: db, d: d, stmts: map[string]*sql.Stmt{}}
}

// stmt returns q prepared on the pool, or nil when it cannot be (the
// caller then runs it unprepared, so that the error surfaces there).
func (p *readPool) stmt(ctx context.Context, q string) *sql.Stmt {
	p.mu.Lock()
	s, ok := p.stmts[q]
	full := len(p.stmts) >= maxReadStmts
	p.mu.Unlock()
	if ok || full {
		return s
	}
	s, err := p.DB.PrepareContext(ctx, p.d.sql(q))
	if err != nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if prev, ok := p.stmts[q]; ok {
		s.Close()
		return prev
	}
	p.stmts[q] = s
	return s
}

func (p *readPool) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if s := p.stmt(ctx, q); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return p.DB.QueryContext(ctx, p.d.sql(q), args...)
}

func (p *readPool) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	if s := p.stmt(ctx, q); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return p.DB.QueryRowContext(ctx, p.d.sql(q), args...)
}

// Close closes the prepared statements and the pool.
func (p *readPool) Close() error {
	p.mu.Lock()
	for _, s := range p.stmts {
		s.Close()
	}
	p.stmts = nil
	p.mu.Unlock()
	return p.DB.Close()
}
