package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// buildBinary builds ./cmd/demiurge of the enclosing module, statically
// (CGO_ENABLED=0) as it ships, into dir and returns the binary's path.
func buildBinary(ctx context.Context, dir string) (string, error) {
	return buildPackage(ctx, dir, "./cmd/demiurge", "demiurge")
}

// buildPackage builds one main package of the module into dir/name.
func buildPackage(ctx context.Context, dir, pkg, name string) (string, error) {
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// moduleRoot is the directory of the go.mod governing the working
// directory; the driver must be run from inside the module.
func moduleRoot(ctx context.Context) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", "env", "GOMOD")
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go env GOMOD: %v: %s", err, strings.TrimSpace(errb.String()))
	}
	gomod := strings.TrimSpace(out.String())
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside a Go module: run the driver from the demiurge checkout")
	}
	return filepath.Dir(gomod), nil
}
