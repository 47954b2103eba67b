// Command mcptestserver runs the mcp package's test server over stdio, or
// over streamable HTTP with -http.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/demiurge/demiurge/mcp/internal/testserver"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	var cfg testserver.Config
	flag.StringVar(&cfg.Mode, "mode", testserver.ModeHealthy, "behaviour")
	flag.IntVar(&cfg.Tools, "tools", 0, "extra trivial tools")
	flag.StringVar(&cfg.StateDir, "state", "", "directory for state files")
	flag.DurationVar(&cfg.InitDelay, "init-delay", 0, "delay before answering initialize")
	ignoreTerm := flag.Bool("ignore-term", false, "ignore SIGTERM")
	httpAddr := flag.String("http", "", "serve streamable HTTP on this address (prints the URL)")
	flag.Parse()
	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	ctx := context.Background()
	if *httpAddr != "" {
		ln, err := net.Listen("tcp", *httpAddr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("http://%s/mcp\n", ln.Addr())
		h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return testserver.New(cfg) }, nil)
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		fmt.Fprintln(os.Stderr, srv.Serve(ln))
		os.Exit(1)
	}
	if err := testserver.RunStdio(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		os.Exit(1)
	}
}
