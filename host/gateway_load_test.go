package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/store"
)

// loadGateway is a Host over a home whose webhook answers on loopback,
// with no callback (replies are dropped), for load tests.
func loadGateway(tb testing.TB) (*host.Host, string) {
	tb.Helper()
	home := tb.TempDir()
	h0, err := host.Open(context.Background(), host.Options{Home: home, Getenv: func(string) string { return "" }})
	if err != nil {
		tb.Fatal(err)
	}
	h0.Close(context.Background())
	writeChannels(tb, home, "  webhook:\n    enabled: true\n    token: tok-123456789\n")
	h, err := host.Open(context.Background(), host.Options{Home: home, Getenv: func(string) string { return "" }})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close(context.Background()) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := h.StartGateway(context.Background(), host.WithWebhookListener(host.GatewayOptions{Drain: 10 * time.Second},
		func(string, string) net.Listener { return ln })); err != nil {
		tb.Fatal(err)
	}
	return h, "http://" + ln.Addr().String() + "/demiurge"
}

var loadClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}

func postText(url, source, id, text string) (int, error) {
	body, _ := json.Marshal(map[string]any{"text": text, "source": source, "request_id": id})
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer tok-123456789")
	resp, err := loadClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Many concurrent conversations on one gateway: every message (each posted
// twice, as a retrying client would) is admitted once, as one turn of its
// own conversation's session.
func TestGatewayManyConversations(t *testing.T) {
	n := 1000
	if testing.Short() || raceEnabled {
		n = 150
	}
	h, url := loadGateway(t)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			for range 2 {
				status, err := postText(url, fmt.Sprintf("user%d", i), fmt.Sprintf("req-%d", i), fmt.Sprintf("message %d", i))
				if err == nil && status != 202 {
					err = fmt.Errorf("status %d", status)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	db := host.StoreOf(h)
	ctx := context.Background()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		counts, err := db.InboxCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		total, done := 0, 0
		for _, c := range counts {
			total += c.Count
			if c.Status == demiurge.InboundDone {
				done += c.Count
			}
		}
		if total != n {
			t.Fatalf("%d inbounds for %d messages", total, n)
		}
		if done == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d done: %+v", done, n, counts)
		}
		time.Sleep(50 * time.Millisecond)
	}
	ins, err := db.Inbounds(ctx, store.InboundFilter{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	var sessions []string
	for _, in := range ins {
		if in.Result != demiurge.InboundResultTurn || in.TurnID == "" {
			t.Fatalf("inbound %+v", in)
		}
		sessions = append(sessions, in.SessionID)
	}
	slices.Sort(sessions)
	if len(slices.Compact(sessions)) != len(ins) {
		t.Fatal("two conversations shared a session")
	}
}

// BenchmarkWebhookAccept measures the durable accept: the time from a
// webhook POST to its 202, which is committed to the inbox first, at the
// issue's 200 requests a second (b.N requests, paced), reporting the p50
// and p99 latencies; every message is admitted once.
func BenchmarkWebhookAccept(b *testing.B) {
	_, url := loadGateway(b)
	var lat []time.Duration
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var mu sync.Mutex
	var wg sync.WaitGroup
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		<-tick.C
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			status, err := postText(url, fmt.Sprintf("bench%d", i%50), fmt.Sprintf("bench-%d", i), "hello")
			d := time.Since(start)
			if err != nil || status != 202 {
				b.Errorf("POST: %d %v", status, err)
				return
			}
			mu.Lock()
			lat = append(lat, d)
			mu.Unlock()
		}()
	}
	wg.Wait()
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
}
