package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Targets of the process figures beside the kept-home run.
const (
	freshTarget = 60 * time.Millisecond // `run` on a home it must create first
	exitTarget  = 3 * time.Millisecond  // the model's final answer to process exit
)

// freshRows measures `demiurge run hello` on a home that does not exist
// yet: each sample initialises its own (templates, database, core
// repository) and runs the turn.
func freshRows(ctx context.Context, bin, dir string, c counts) ([]row, error) {
	workspace := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(workspace, 0o700); err != nil {
		return nil, err
	}
	home := func(i int) string { return filepath.Join(dir, fmt.Sprintf("home-%d", i)) }
	for i := range max(c.coldWarm, 1) {
		if _, err := coldRun(ctx, bin, home(-1-i), workspace); err != nil {
			return nil, fmt.Errorf("fresh warm-up run %d: %w", i+1, err)
		}
	}
	walls := make([]time.Duration, 0, c.runs)
	for i := range c.runs {
		r, err := coldRun(ctx, bin, home(i), workspace)
		if err != nil {
			return nil, fmt.Errorf("fresh run %d: %w", i+1, err)
		}
		walls = append(walls, r.wall)
		// Each home is used once; removing it keeps the temporary
		// directory small for long runs.
		os.RemoveAll(home(i))
	}
	return timedRows(figFresh, walls, freshTarget), nil
}

// exitRows measures the time from the model's final answer to the exit of
// `demiurge run`: the provider is a loopback Chat Completions server whose
// answer is the turn's only model step, and each sample runs from the
// moment the server finished writing that answer to the moment the process
// is reaped. It is what the turn and the process do after the model is
// done: output slots, deliveries, the terminal record, closing the Host.
func exitRows(ctx context.Context, bin, dir string, c counts) ([]row, error) {
	home, workspace := filepath.Join(dir, "home"), filepath.Join(dir, "workspace")
	if err := os.MkdirAll(workspace, 0o700); err != nil {
		return nil, err
	}
	srv, err := startAnswerServer()
	if err != nil {
		return nil, err
	}
	defer srv.close()
	if _, _, err := runChild(ctx, bin, home, workspace, "init"); err != nil {
		return nil, err
	}
	samples := make([]time.Duration, 0, c.runs)
	for i := range max(c.coldWarm, 1) + c.runs {
		d, err := exitRun(ctx, bin, home, workspace, srv)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", i+1, err)
		}
		if i >= max(c.coldWarm, 1) {
			samples = append(samples, d)
		}
	}
	return timedRows(figExit, samples, exitTarget), nil
}

// exitRun runs `demiurge run --provider openai hello` against srv once and
// returns the time from the answer to the reaped process.
func exitRun(ctx context.Context, bin, home, workspace string, srv *answerServer) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, coldTimeout)
	defer cancel()
	var out, errb strings.Builder
	cmd := demiurgeCmd(ctx, bin, home, workspace, "run", "--provider", "openai", "hello")
	cmd.Env = append(cmd.Env, "OPENAI_API_KEY=bench-key", "OPENAI_BASE_URL="+srv.url+"/v1")
	cmd.Stdout, cmd.Stderr = &out, &errb
	srv.reset()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("demiurge run --provider openai: %v: %s", err, strings.TrimSpace(errb.String()))
	}
	exited := time.Now()
	answered, ok := srv.answered()
	if !ok {
		return 0, fmt.Errorf("demiurge run --provider openai exited without asking the model")
	}
	if !strings.Contains(out.String(), answerText) {
		return 0, fmt.Errorf("demiurge run --provider openai printed %q, want %q", out.String(), answerText)
	}
	return exited.Sub(answered), nil
}

// answerText is the loopback model's one answer.
const answerText = "bench answer"

// answerServer is a loopback Chat Completions server that answers every
// request with answerText and remembers when it finished writing the
// answer of the current run.
type answerServer struct {
	url  string
	srv  *http.Server
	done chan struct{} // closed when Serve returned

	mu   sync.Mutex // guards at
	at   time.Time
	seen bool
}

func startAnswerServer() (*answerServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &answerServer{url: "http://" + ln.Addr().String(), done: make(chan struct{})}
	body := fmt.Sprintf(`{"id":"bench","object":"chat.completion","model":"bench","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`, answerText)
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		s.mu.Lock()
		s.at, s.seen = time.Now(), true
		s.mu.Unlock()
	})}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

func (s *answerServer) reset() {
	s.mu.Lock()
	s.seen = false
	s.mu.Unlock()
}

func (s *answerServer) answered() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.at, s.seen
}

// close stops the server and waits for its goroutine.
func (s *answerServer) close() {
	_ = s.srv.Close()
	<-s.done
}
