package host

import (
	"log/slog"
	"os"
	"path/filepath"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/redact"
)

// openLog opens <home>/logs/host.log (0600, appended) behind a redacting
// handler: every message and attribute is scrubbed of the credentials the
// Host knows (provider keys and other key-like environment values) and of
// values under sensitive attribute names, before it reaches the file.
func openLog(home Home, secrets func() []string) (*slog.Logger, *os.File, error) {
	path := filepath.Join(home.LogsDir(), "host.log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, demiurge.WrapError(demiurge.ECONFIG, err, "open %s: %s", path, demiurge.IOReason(err))
	}
	known := func() *redact.Redactor {
		vals := secrets()
		s := make([]redact.Secret, 0, len(vals))
		for _, v := range vals {
			s = append(s, redact.Secret{Value: v, Name: "API_KEY", Source: "host"})
		}
		return redact.New(s...)
	}
	h := redact.NewHandler(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo}), known)
	return slog.New(h), f, nil
}
