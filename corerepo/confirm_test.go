package corerepo

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/coregate"
)

// tokenTimeForm is the expiry format of confirmation tokens (the package
// doc's <expiry>).
const tokenTimeForm = "20060102T150405Z"

// testClock is an adjustable clock for Options.Now.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// clockedHome is newHome with a repository opened on an adjustable clock.
func clockedHome(t *testing.T) (Paths, *Repo, *testClock) {
	t.Helper()
	p, _ := newHome(t)
	clock := &testClock{t: time.Now()}
	r, err := Open(p, Options{Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	return p, r, clock
}

// grant adds a capability grant to core's agent.yaml under agents.
func grant(t *testing.T, agents, core string) {
	t.Helper()
	editFile(t, agents, core+"/agent.yaml", "\n  defaults:\n", "\n  defaults:\n    secret.bind:DEPLOY_TOKEN: {}\n")
}

// saveToken is the token Save's refusal of the local edits issues.
func saveToken(t *testing.T, r *Repo) string {
	t.Helper()
	_, err := r.Save(context.Background(), SaveOptions{})
	wantCode(t, err, demiurge.ECONFIG, "operator confirmation required: run `demiurge core save --confirm "+coregate.SaveTokenPrefix)
	token := gateErr(t, err).Token
	if !strings.HasPrefix(token, coregate.SaveTokenPrefix) {
		t.Fatalf("token %q", token)
	}
	return token
}

// publicDigest is what the old token was made of: the digest of the
// security changes, which anyone able to read the files can compute.
func publicDigest(t *testing.T, r *Repo) string {
	t.Helper()
	_, res, err := r.git.ScanLive()
	if err != nil {
		t.Fatal(err)
	}
	newTree, problems, content := res.Proposed()
	edit := coregate.NewEdit(coregate.Input{Root: r.paths.Agents, Old: res.Base, New: newTree, Problems: problems, Content: content, Blobs: r.git})
	sr, err := edit.Security(false)
	if err != nil || sr.Digest == "" {
		t.Fatalf("Security = %+v, %v", sr, err)
	}
	return sr.Digest
}

func wantSaveRefused(t *testing.T, r *Repo, token, why string) {
	t.Helper()
	live := mustLive(t, r)
	_, err := r.Save(context.Background(), SaveOptions{Confirm: token})
	wantCode(t, err, demiurge.ECONFIG, "local agent edits failed gates: approval_security: ")
	if !strings.Contains(err.Error(), "; "+why+"; operator confirmation required: run `demiurge core save --confirm "+coregate.SaveTokenPrefix) {
		t.Fatalf("Save(%q) = %q, want the reason %q", token, err, why)
	}
	if mustLive(t, r) != live {
		t.Fatal("live moved on a refused token")
	}
}

func TestSaveTokenCannotBeForgedFromPublicFacts(t *testing.T) {
	p, r := newHome(t)
	grant(t, p.Agents, "assistant")
	genuine := saveToken(t, r)
	digest := publicDigest(t, r)
	live := mustLive(t, r)
	expiry, _, _ := strings.Cut(strings.TrimPrefix(genuine, coregate.SaveTokenPrefix+"assistant:"), ":")
	// Keys an attacker could derive from what the agent can read.
	var macs []string
	for _, guess := range [][]byte{make([]byte, 32), []byte(digest), []byte(live), []byte(p.Agents)} {
		m := hmac.New(sha256.New, guess)
		m.Write([]byte(digest + live + expiry))
		macs = append(macs, hex.EncodeToString(m.Sum(nil)))
	}
	sum := sha256.Sum256([]byte(digest + live + expiry))
	macs = append(macs, digest, hex.EncodeToString(sum[:]))

	wantSaveRefused(t, r, coregate.TokenPrefix+digest, "confirmation token is an evolve review token; want one starting confirm-save:")
	for _, mac := range macs {
		wantSaveRefused(t, r, coregate.SaveTokenPrefix+"assistant:"+expiry+":"+mac, "confirmation token does not confirm this change")
	}
	// A later expiry the operator never saw is a different token.
	later := strings.Replace(genuine, expiry, "29991231T235959Z", 1)
	wantSaveRefused(t, r, later, "confirmation token does not confirm this change")
	// The genuine token of another home (another key) confirms nothing here.
	p2, r2 := newHome(t)
	grant(t, p2.Agents, "assistant")
	wantSaveRefused(t, r, saveToken(t, r2), "confirmation token does not confirm this change")
	for _, bad := range []string{"confirm-save:", "confirm-save:assistant", "confirm-save:assistant:" + expiry + ":zz", "confirm-save:assistant:tomorrow:" + digest, "sure"} {
		why := "confirmation token is malformed: want confirm-save:<subject>:<expiry>:<mac>"
		wantSaveRefused(t, r, bad, why)
	}

	if res, err := r.Save(context.Background(), SaveOptions{Confirm: genuine}); err != nil || !res.Saved {
		t.Fatalf("Save with the genuine token = %+v, %v", res, err)
	}
}

func TestSaveTokenConfirmsOnlyItsChange(t *testing.T) {
	ctx := context.Background()
	p, r := newHome(t)
	grant(t, p.Agents, "assistant")
	token := saveToken(t, r)

	// Other content: another grant instead.
	editFile(t, p.Agents, "assistant/agent.yaml", "secret.bind:DEPLOY_TOKEN", "secret.bind:AWS_SECRET_ACCESS_KEY")
	wantSaveRefused(t, r, token, "confirmation token does not confirm this change")
	// Other content outside the security change: the token confirms the
	// exact tree it was issued for.
	editFile(t, p.Agents, "assistant/agent.yaml", "secret.bind:AWS_SECRET_ACCESS_KEY", "secret.bind:DEPLOY_TOKEN")
	editFile(t, p.Agents, "assistant/agent/SOUL.md", "", "Slipped in.\n")
	wantSaveRefused(t, r, token, "confirmation token does not confirm this change")

	// Another core: the same grant on evolver.
	if _, err := r.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	grant(t, p.Agents, "evolver")
	wantSaveRefused(t, r, token, "confirmation token is for changes to assistant, not evolver")
	// Naming the other core in the token does not help: the MAC binds it.
	wantSaveRefused(t, r, strings.Replace(token, ":assistant:", ":evolver:", 1), "confirmation token does not confirm this change")

	// Another purpose: a review token of a run is no save token, and a
	// save token is no review token.
	if _, err := r.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	run := startEdited(t, r, func(a string) { grant(t, a, "assistant") })
	rv, err := r.Review(ctx, run.ID, ReviewOptions{})
	if err != nil || !rv.ManualReviewRequired {
		t.Fatalf("Review = %+v, %v", rv, err)
	}
	grant(t, p.Agents, "assistant")
	wantSaveRefused(t, r, rv.ReviewToken, "confirmation token is an evolve review token; want one starting confirm-save:")
	if _, err := r.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	pr, err := r.Promote(ctx, run.ID, PromoteOptions{Token: token})
	if err != nil || pr.Promoted || !strings.HasSuffix(pr.Summary, "requires manual approval security review: review token is a core save confirmation token; want one starting mcp-review:") {
		t.Fatalf("Promote with a save token = %+v, %v", pr, err)
	}
	// The same change on another base revision is another change.
	grant(t, p.Agents, "assistant")
	stale := saveToken(t, r)
	if _, err := r.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	editFile(t, p.Agents, "assistant/agent/SOUL.md", "", "Unrelated.\n")
	if _, err := r.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	grant(t, p.Agents, "assistant")
	wantSaveRefused(t, r, stale, "confirmation token does not confirm this change")
}

func TestSaveTokenExpires(t *testing.T) {
	ctx := context.Background()
	p, r, clock := clockedHome(t)
	grant(t, p.Agents, "assistant")
	token := saveToken(t, r)
	wantExpiry := clock.now().Add(coregate.SaveTokenTTL).UTC().Format(tokenTimeForm)
	if !strings.HasPrefix(token, coregate.SaveTokenPrefix+"assistant:"+wantExpiry+":") {
		t.Fatalf("token %q does not name core assistant and expiry %s", token, wantExpiry)
	}
	clock.advance(coregate.SaveTokenTTL + time.Second)
	when, _ := time.Parse(tokenTimeForm, wantExpiry)
	wantSaveRefused(t, r, token, "confirmation token expired at "+when.Format(time.RFC3339)+"; run `demiurge core save` again for a new one")
	// The refusal carries a new token, valid from the new now.
	_, err := r.Save(ctx, SaveOptions{Confirm: token})
	fresh := gateErr(t, err).Token
	if fresh == token || fresh == "" {
		t.Fatalf("fresh token %q", fresh)
	}
	clock.advance(coregate.SaveTokenTTL - time.Minute)
	if res, err := r.Save(ctx, SaveOptions{Confirm: fresh}); err != nil || !res.Saved {
		t.Fatalf("Save with an unexpired token = %+v, %v", res, err)
	}
}

func TestReviewTokenBindsRunAndExpires(t *testing.T) {
	ctx := context.Background()
	_, r, clock := clockedHome(t)
	run := startEdited(t, r, func(a string) { grant(t, a, "assistant") })
	rv, err := r.Review(ctx, run.ID, ReviewOptions{})
	if err != nil || !rv.ManualReviewRequired {
		t.Fatalf("Review = %+v, %v", rv, err)
	}
	wantExpiry := clock.now().Add(coregate.ReviewTokenTTL).UTC().Format(tokenTimeForm)
	if !strings.HasPrefix(rv.ReviewToken, coregate.TokenPrefix+run.ID+":"+wantExpiry+":") {
		t.Fatalf("review token %q does not name run %s and expiry %s", rv.ReviewToken, run.ID, wantExpiry)
	}
	for _, name := range []string{"review.json", "report.md", "gates.json"} {
		if strings.Contains(readFile(t, run.Dir, name), rv.ReviewToken) {
			t.Fatalf("%s holds the review token", name)
		}
	}
	prefix := "evolve run " + run.ID + " requires manual approval security review: "
	refused := func(token, why string) {
		t.Helper()
		pr, err := r.Promote(ctx, run.ID, PromoteOptions{Token: token})
		if err != nil || pr.Promoted || pr.Summary != prefix+why {
			t.Fatalf("Promote(%q) = %+v, %v; want %q", token, pr, err, prefix+why)
		}
	}
	// The old plain digest, and that digest as a MAC, are refused.
	old := coregate.TokenPrefix + strings.Repeat("0", 64)
	refused(old, "review token is malformed: want mcp-review:<subject>:<expiry>:<mac>")
	_, tail, _ := strings.Cut(rv.ReviewToken, run.ID+":")
	expiry, _, _ := strings.Cut(tail, ":")
	refused(coregate.TokenPrefix+run.ID+":"+expiry+":"+strings.Repeat("ab", 32), "review token does not confirm this proposal")

	// Another run's token.
	other := "evolve_00000000000000000000000000"
	refused(strings.Replace(rv.ReviewToken, run.ID, other, 1), "review token is for evolve run "+other+", not "+run.ID)

	clock.advance(coregate.ReviewTokenTTL)
	when, _ := time.Parse(tokenTimeForm, wantExpiry)
	refused(rv.ReviewToken, "review token expired at "+when.Format(time.RFC3339)+"; run `demiurge core evolve review "+run.ID+"` again for a new one")
	rv2, err := r.Review(ctx, run.ID, ReviewOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := r.Promote(ctx, run.ID, PromoteOptions{Token: rv2.ReviewToken})
	if err != nil || !pr.Promoted {
		t.Fatalf("Promote with a fresh token = %+v, %v", pr, err)
	}
	if s := readFile(t, run.Dir, runPromoteFile); strings.Contains(s, coregate.TokenPrefix) {
		t.Fatalf("%s holds a review token", runPromoteFile)
	}
}

func TestHostKeyCreatedPrivateAndReused(t *testing.T) {
	p, r := newHome(t)
	if _, err := os.Stat(p.HostKey); !os.IsNotExist(err) {
		t.Fatalf("a key exists before any token was needed: %v", err)
	}
	grant(t, p.Agents, "assistant")
	token := saveToken(t, r)
	info, err := os.Stat(p.HostKey)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() != coregate.HostKeySize {
		t.Fatalf("key file is %d bytes", info.Size())
	}
	if runtime.GOOS != "windows" && info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v", info.Mode().Perm())
	}
	before, _ := os.ReadFile(p.HostKey)
	if strings.Contains(token, hex.EncodeToString(before)) || bytes.Contains([]byte(token), before) {
		t.Fatal("the token shows the key")
	}

	// Another Repo (another process) on the same home reuses the key.
	r2, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := r2.Save(context.Background(), SaveOptions{Confirm: token}); err != nil || !res.Saved {
		t.Fatalf("Save in a second Repo = %+v, %v", res, err)
	}
	if after, _ := os.ReadFile(p.HostKey); !bytes.Equal(before, after) {
		t.Fatal("the key file changed")
	}
	entries, _ := os.ReadDir(filepath.Dir(p.HostKey))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Fatalf("temporary file left: %s", e.Name())
		}
	}
}

func TestHostKeyCorruptIsAClearError(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		content []byte
		mode    os.FileMode
		want    string
	}{
		{"short", []byte("0123456789"), 0o600, "is corrupt: 10 bytes, want 32; remove it to make a new key (confirmation tokens issued with the old key stop working)"},
		{"empty", nil, 0o600, "is corrupt: 0 bytes, want 32"},
		{"long", bytes.Repeat([]byte{7}, 64), 0o600, "is corrupt: longer than 32 bytes"},
		{"zero", make([]byte, 32), 0o600, "is corrupt: all zero bytes"},
		{"readable by others", bytes.Repeat([]byte{7}, 32), 0o644, "is accessible by other users (mode 0644); run `chmod 600 "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.mode != 0o600 && runtime.GOOS == "windows" {
				t.Skip("no permission bits")
			}
			p, r := newHome(t)
			if err := os.WriteFile(p.HostKey, tc.content, tc.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p.HostKey, tc.mode); err != nil {
				t.Fatal(err)
			}
			_, err := coregate.LoadHostKey(p.HostKey)
			wantCode(t, err, demiurge.ECONFIG, "host key file "+p.HostKey+" "+tc.want)
			grant(t, p.Agents, "assistant")
			live := mustLive(t, r)
			_, err = r.Save(ctx, SaveOptions{})
			wantCode(t, err, demiurge.ECONFIG, "host key file "+p.HostKey+" "+tc.want)
			if got, _ := os.ReadFile(p.HostKey); !bytes.Equal(got, tc.content) {
				t.Fatal("the corrupt key file was rewritten")
			}
			if mustLive(t, r) != live {
				t.Fatal("live moved")
			}
			// A turn's save needs no key: it names the command.
			_, err = r.EnsureSaved(ctx)
			wantCode(t, err, demiurge.ECONFIG, "run `demiurge core save` to confirm it")
		})
	}
	t.Run("directory", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "host.key")
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		_, err := coregate.LoadHostKey(path)
		wantCode(t, err, demiurge.ECONFIG, "host key file "+path+" is not a regular file")
	})
}

func TestHostKeyNeverPrinted(t *testing.T) {
	raw := bytes.Repeat([]byte{0xab}, coregate.HostKeySize)
	k, err := coregate.NewHostKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("key", "k", k)
	js, _ := json.Marshal(map[string]any{"k": k})
	out := fmt.Sprintf("%v %s %x %X %#v %+v %q %d", k, k, k, k, k, k, k, k) + logged.String() + string(js)
	if strings.Contains(strings.ToLower(out), "abab") || !strings.Contains(out, "[host key]") {
		t.Fatalf("key shown: %s", out)
	}
	if _, err := coregate.NewHostKey(raw[:31]); err == nil {
		t.Fatal("a short key was accepted")
	}

	// An injected key is used instead of the file.
	p, _ := newHome(t)
	r, err := Open(p, Options{HostKey: k})
	if err != nil {
		t.Fatal(err)
	}
	grant(t, p.Agents, "assistant")
	token := saveToken(t, r)
	if _, err := os.Stat(p.HostKey); !os.IsNotExist(err) {
		t.Fatal("the key file was made although a key was given")
	}
	r2, _ := Open(p, Options{})
	wantSaveRefused(t, r2, token, "confirmation token does not confirm this change")
	if res, err := r.Save(context.Background(), SaveOptions{Confirm: token}); err != nil || !res.Saved {
		t.Fatalf("Save = %+v, %v", res, err)
	}
}
