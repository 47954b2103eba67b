package urlpolicy

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"
)

// TestControlRefusesRealAddress: the Control hook judges the address the
// socket is about to connect to, whatever produced it. A dial to a
// loopback listener with addresses that were never judged is refused
// before connect, and the listener never sees a connection.
func TestControlRefusesRealAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 4)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	addrs := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::ffff:127.0.0.1")}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	strict := Policy{}
	_, err = dialAddrs(ctx, &net.Dialer{Control: strict.Control}, "tcp", addrs, port)
	var blocked *BlockedError
	if !errors.As(err, &blocked) || blocked.Decision.Reason != ReasonPrivateAddress {
		t.Fatalf("dial under the default policy: err=%v, want a private_address refusal", err)
	}
	if got, want := blocked.Error(), "URL blocked by Host policy: private_address (127.0.0.1:"+strconv.Itoa(port)+")"; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}

	admit := Policy{AllowPrivatePrefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	conn, err := dialAddrs(ctx, &net.Dialer{Control: admit.Control}, "tcp", addrs, port)
	if err != nil {
		t.Fatalf("dial with loopback admitted: %v", err)
	}
	conn.Close()
	select {
	case <-accepted:
	case <-ctx.Done():
		t.Fatal("admitted dial never reached the listener")
	}
	ln.Close()
	<-done
	if n := len(accepted); n != 0 {
		t.Fatalf("listener accepted %d refused connections", n)
	}
}

func TestControlRejectsUnparsableAddress(t *testing.T) {
	var blocked *BlockedError
	if err := (Policy{AllowPrivate: true}).Control("tcp", "localhost:80", nil); !errors.As(err, &blocked) {
		t.Fatalf("Control(localhost:80) = %v, want a refusal", err)
	}
}
