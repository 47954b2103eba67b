package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/cmd/bench/internal/procstat"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/store"
)

// Targets of the gateway figures.
const (
	webhookRate     = 200                     // requests a second, open loop
	webhookP50      = 5 * time.Millisecond    // POST to durable 202, median
	webhookP99      = 50 * time.Millisecond   // … 99th percentile
	gatewayRSS      = 200.0                   // MiB, the gateway with every conversation admitted
	modelThinkTime  = time.Second             // the loopback model's answer time
	gatewayTimeout  = 5 * time.Minute         // one gateway measurement, start to exit
	webhookToken    = "bench-webhook-token-1" // the channel's bearer token
	webhookWarm     = 50                      // requests before the samples, at the same rate
	webhookSources  = 50                      // conversations the accept figure's requests cycle through
	conversationsIn = 64                      // concurrent posters of the conversations figure
)

// webhookRows measures the durable accept of a real `demiurge gateway`
// process: an open-loop client posts at webhookRate requests a second
// over keep-alive connections, each latency runs from the POST to its 202
// (which the gateway sends only once the message is committed), and every
// message must then be in the inbox exactly once. It is measured twice.
// First with every request from a conversation of its own and the turns
// on a loopback model that answers after modelThinkTime, as a real one
// does: the gateway runs its 16 turns at once and the inbox queues the
// rest. Then with the requests cycling through webhookSources
// conversations (so each message interrupts its conversation's turn) and
// the built-in fake provider, whose turns run back to back and take all
// the CPU and store time they can: the worst case for the accept.
func webhookRows(ctx context.Context, bin, dir string, c counts) ([]row, error) {
	target := fmt.Sprintf("p50 ≤ %g ms, p99 ≤ %g ms", ms64(webhookP50), ms64(webhookP99))
	if runtime.GOOS != "linux" {
		return []row{{figure: figWebhook, value: "n/a (Linux only)", target: target}}, nil
	}
	model, err := startModelServer(modelThinkTime)
	if err != nil {
		return nil, err
	}
	defer model.close()
	var rows []row
	for _, v := range []struct {
		name    string
		model   *modelServer
		sources int
	}{
		{fmt.Sprintf("a new conversation each, model answering in %g s", modelThinkTime.Seconds()), model, 0},
		{fmt.Sprintf("%d conversations, fake provider turns back to back", webhookSources), nil, webhookSources},
	} {
		lat, err := webhookLoad(ctx, bin, filepath.Join(dir, fmt.Sprintf("home-%d", len(rows))), v.model, v.sources, c.webhookFor)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.name, err)
		}
		s := percentiles(lat)
		rows = append(rows, row{figure: fmt.Sprintf("%s, %s, p50 / p99", figWebhook, v.name),
			value:  fmt.Sprintf("%s / %s (%d requests)", ms(s.p50), ms(s.p99), len(lat)),
			target: target, verdict: check(s.p50 <= webhookP50 && s.p99 <= webhookP99)})
	}
	return rows, nil
}

// webhookLoad runs one gateway on a new home, posts rate·d requests to it
// at a constant rate, from sources conversations (0: one each), and
// returns their latencies. A request that is not answered 202, and an
// inbox that does not hold every message exactly once, fail the
// measurement.
func webhookLoad(ctx context.Context, bin, home string, model *modelServer, sources int, d time.Duration) ([]time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, gatewayTimeout)
	defer cancel()
	gw, err := startGateway(ctx, bin, home, model)
	if err != nil {
		return nil, err
	}
	defer gw.stop()
	client := benchClient()
	defer client.CloseIdleConnections()
	// The first webhookWarm requests warm the gateway (its first turns
	// load the core, its client connections open) and are not samples.
	n := webhookWarm + int(d.Seconds()*webhookRate)
	lat := make([]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		// Open loop: request i leaves at its own time, whatever the
		// answers to the earlier ones.
		if wait := time.Until(start.Add(time.Duration(i) * time.Second / webhookRate)); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				wg.Wait() // the requests under way end with ctx
				return nil, ctx.Err()
			}
		}
		source := fmt.Sprintf("bench%d", i)
		if sources > 0 {
			source = fmt.Sprintf("bench%d", i%sources)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			errs[i] = postMessage(ctx, client, gw.url, source, fmt.Sprintf("bench-%d", i), "hello")
			lat[i] = time.Since(t0)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%d requests: %w", n, err)
	}
	if err := gw.stop(); err != nil {
		return nil, err
	}
	if err := inboxHoldsOnce(ctx, home, n); err != nil {
		return nil, err
	}
	return lat[webhookWarm:], nil
}

// conversationRows measures one gateway with c.conversations concurrent
// conversations: each posts one message (and posts it again, as a
// retrying client would), every message must be admitted exactly once as
// a turn of its own conversation's session (the fake provider answers),
// and the gateway process's peak resident memory is reported.
func conversationRows(ctx context.Context, bin, dir string, c counts) ([]row, error) {
	fig := thousands(c.conversations) + " " + figConversations
	target := fmt.Sprintf("≤ %g MiB", gatewayRSS)
	if runtime.GOOS != "linux" {
		return []row{{figure: fig, value: "n/a (needs /proc)", target: target}}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, gatewayTimeout)
	defer cancel()
	home := filepath.Join(dir, "home")
	gw, err := startGateway(ctx, bin, home, nil)
	if err != nil {
		return nil, err
	}
	defer gw.stop()
	client := benchClient()
	defer client.CloseIdleConnections()
	n := c.conversations
	began := time.Now()
	jobs := make(chan int)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for range conversationsIn {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				for range 2 {
					if errs[i] = postMessage(ctx, client, gw.url, fmt.Sprintf("user%d", i), fmt.Sprintf("conv-%d", i), fmt.Sprintf("message %d", i)); errs[i] != nil {
						break
					}
				}
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, host.Home{Dir: home}.DBPath(), store.Options{})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	for {
		counts, err := countInbox(ctx, db)
		if err != nil {
			return nil, err
		}
		if counts.total != n {
			return nil, fmt.Errorf("the inbox holds %d messages for %d conversations", counts.total, n)
		}
		if counts.done == n {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%d of %d messages done: %w", counts.done, n, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	elapsed := time.Since(began)
	status, err := procstat.Status(fmt.Sprintf("/proc/%d/status", gw.cmd.Process.Pid))
	if err != nil {
		return nil, err
	}
	// Every inbound ran as a turn, each in a session of its own (the
	// newest 500 are checked: the store lists no more at once).
	ins, err := db.Inbounds(ctx, store.InboundFilter{Limit: 500})
	if err != nil {
		return nil, err
	}
	sessions := map[string]bool{}
	for _, in := range ins {
		if in.Result != demiurge.InboundResultTurn || in.TurnID == "" || sessions[in.SessionID] {
			return nil, fmt.Errorf("inbound %s: result %q, turn %q, session %q (twice: %t)", in.ID, in.Result, in.TurnID, in.SessionID, sessions[in.SessionID])
		}
		sessions[in.SessionID] = true
	}
	if err := gw.stop(); err != nil {
		return nil, err
	}
	return []row{
		{figure: fig + ", peak RSS (VmHWM)", value: fmt.Sprintf("%.1f MiB", status["VmHWM"]), target: target, verdict: check(status["VmHWM"] <= gatewayRSS)},
		{figure: fig + ", every message admitted once", value: fmt.Sprintf("%d turns in %.1f s", n, elapsed.Seconds())},
	}, nil
}

// gatewayProc is a running `demiurge gateway`.
type gatewayProc struct {
	cmd    *exec.Cmd
	url    string
	stderr *watcher
	once   sync.Once
	err    error
}

// startGateway initialises home with the assistant core's webhook channel
// enabled on a free loopback port and starts `demiurge gateway` on it,
// with model as the provider (nil: the built-in fake one). It returns
// once the webhook answers HTTP.
func startGateway(ctx context.Context, bin, home string, model *modelServer) (*gatewayProc, error) {
	workspace := filepath.Join(home, "..", filepath.Base(home)+"-workspace")
	if err := os.MkdirAll(workspace, 0o700); err != nil {
		return nil, err
	}
	if _, _, err := runChild(ctx, bin, home, workspace, "init"); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(home, "agents", "assistant", "agent.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block := fmt.Sprintf("channels:\n  webhook:\n    enabled: true\n    token: %s\n    host: 127.0.0.1\n    port: %d\n", webhookToken, port)
	if !strings.Contains(string(b), "channels: {}\n") {
		return nil, fmt.Errorf("%s has no empty channels block to replace", path)
	}
	yaml := strings.Replace(string(b), "channels: {}\n", block, 1)
	if model != nil {
		// The core's model: the loopback server, as the openai provider.
		yaml = strings.Replace(yaml, "  provider: auto\n  model_name: null\n", "  provider: openai\n  model_name: bench\n", 1)
		if !strings.Contains(yaml, "provider: openai") {
			return nil, fmt.Errorf("%s has no model block to point at the loopback model", path)
		}
	}
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		return nil, err
	}
	cmd := demiurgeCmd(ctx, bin, home, workspace, "gateway")
	if model != nil {
		cmd.Env = append(cmd.Env, "OPENAI_API_KEY=bench-key", "OPENAI_BASE_URL="+model.url+"/v1")
	}
	g := &gatewayProc{cmd: cmd, url: fmt.Sprintf("http://127.0.0.1:%d/demiurge", port), stderr: newWatcher("")}
	cmd.Stdout, cmd.Stderr = io.Discard, g.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start demiurge gateway: %w", err)
	}
	// The webhook answers a GET (501) once it listens.
	client := &http.Client{Timeout: time.Second}
	for {
		resp, err := client.Get(g.url)
		if err == nil {
			resp.Body.Close()
			return g, nil
		}
		select {
		case <-ctx.Done():
			g.stop()
			return nil, fmt.Errorf("demiurge gateway never answered on %s: %v (stderr %q)", g.url, ctx.Err(), g.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop ends the gateway with SIGTERM (its turns in flight drain) and
// reaps it; it must exit 0. Stopping twice returns the first result.
func (g *gatewayProc) stop() error {
	g.once.Do(func() {
		if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			g.err = err
		}
		if err := g.cmd.Wait(); err != nil && g.err == nil {
			g.err = fmt.Errorf("demiurge gateway: %v (stderr %q)", err, g.stderr.String())
		}
	})
	return g.err
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// benchClient keeps its connections alive across requests, as a platform
// posting webhooks does.
func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute},
		Timeout: time.Minute}
}

// postMessage posts one webhook message with request_id id (its dedup
// key); anything but 202 is an error.
func postMessage(ctx context.Context, client *http.Client, url, source, id, text string) error {
	body, _ := json.Marshal(map[string]any{"text": text, "source": source, "request_id": id})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(body)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+webhookToken)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("POST %s: %d %s", id, resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	return nil
}

// inboxTotals counts a home's inbox.
type inboxTotals struct{ total, done int }

// inboxHoldsOnce checks that home's inbox holds the n messages posted
// as bench-0 … bench-<n-1> and nothing else: by their dedup keys when the
// store can list them all at once (500), else by their number.
func inboxHoldsOnce(ctx context.Context, home string, n int) error {
	db, err := store.Open(ctx, host.Home{Dir: home}.DBPath(), store.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	counts, err := countInbox(ctx, db)
	if err != nil {
		return err
	}
	if counts.total != n {
		return fmt.Errorf("the inbox holds %d messages of the %d accepted", counts.total, n)
	}
	if n > 500 {
		return nil
	}
	ins, err := db.Inbounds(ctx, store.InboundFilter{Limit: 500})
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, in := range ins {
		seen[in.EventKey] = true
	}
	for i := range n {
		if key := fmt.Sprintf("id:bench-%d", i); !seen[key] {
			return fmt.Errorf("message %s is not in the inbox", key)
		}
	}
	return nil
}

func countInbox(ctx context.Context, db *store.DB) (inboxTotals, error) {
	counts, err := db.InboxCounts(ctx)
	if err != nil {
		return inboxTotals{}, err
	}
	var t inboxTotals
	for _, c := range counts {
		t.total += c.Count
		if c.Status == demiurge.InboundDone {
			t.done += c.Count
		}
	}
	return t, nil
}

// p50p99 are the latency percentiles of the accept figure.
type p50p99 struct{ p50, p99 time.Duration }

// percentiles are the nearest-rank 50th and 99th percentiles of samples.
func percentiles(samples []time.Duration) p50p99 {
	s := slices.Clone(samples)
	if len(s) == 0 {
		return p50p99{}
	}
	slices.Sort(s)
	rank := func(p int) time.Duration { return s[max((p*len(s)+99)/100, 1)-1] }
	return p50p99{p50: rank(50), p99: rank(99)}
}

func ms64(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// modelServer is a loopback Chat Completions server that answers every
// request with answerText after think.
type modelServer struct {
	url  string
	srv  *http.Server
	done chan struct{}
}

func startModelServer(think time.Duration) (*modelServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &modelServer{url: "http://" + ln.Addr().String(), done: make(chan struct{})}
	body := fmt.Sprintf(`{"id":"bench","object":"chat.completion","model":"bench","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`, answerText)
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-time.After(think):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	})}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

func (s *modelServer) close() {
	_ = s.srv.Close()
	<-s.done
}

// thousands formats n with a comma between thousands: 1000 → "1,000".
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
