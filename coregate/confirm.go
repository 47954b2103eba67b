package coregate

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/coretree"
)

// Operator confirmation tokens. A token is
//
//	<prefix><subject>:<expiry>:<mac>
//
// prefix names what it confirms (SaveTokenPrefix: a local save;
// TokenPrefix: the promotion of a reviewed evolve run), subject is readable
// (the cores a save's security changes touch, comma-separated, "global"
// for agents/agent.yaml; the run id of a promotion), expiry is UTC
// 20060102T150405Z, and mac is hex HMAC-SHA256 under the Host secret key
// (HostKey) of the purpose, the subject, what exactly is confirmed and the
// expiry. A save token binds the live revision the save is on, a digest of
// the exact tree it commits and the digest of its security changes; a
// promotion token binds the run's target core, base revision, proposal
// revision and the digest of its security changes. None of these can be
// made without the key, however much of the tree one can read.
const (
	// TokenPrefix starts every review token: what `demiurge core evolve
	// promote RUN --manual-review-token` takes.
	TokenPrefix = "mcp-review:"
	// SaveTokenPrefix starts every local save confirmation token: what
	// `demiurge core save --confirm` takes.
	SaveTokenPrefix = "confirm-save:"
	// SaveTokenTTL is how long a save confirmation token is valid.
	SaveTokenTTL = time.Hour
	// ReviewTokenTTL is how long a review token is valid.
	ReviewTokenTTL = 24 * time.Hour
)

const (
	purposeSave    = "save"
	purposePromote = "promote"
	tokenTimeForm  = "20060102T150405Z"
	tokenMACDomain = "demiurge confirmation token v1"
)

// Confirmation is what one token confirms: made by the approval_security
// gate of a save (LocalGates) or a proposal review (ReviewProposal).
type Confirmation struct {
	purpose string   // purposeSave or purposePromote
	subject string   // readable in the token
	runID   string   // promotion: the run (its review command names it)
	bound   []string // bound by the MAC only: revisions and digests
}

func (c Confirmation) prefix() string {
	if c.purpose == purposeSave {
		return SaveTokenPrefix
	}
	return TokenPrefix
}

func (c Confirmation) ttl() time.Duration {
	if c.purpose == purposeSave {
		return SaveTokenTTL
	}
	return ReviewTokenTTL
}

// noun names the token in messages.
func (c Confirmation) noun() string {
	if c.purpose == purposeSave {
		return "confirmation token"
	}
	return "review token"
}

// what names the confirmed change in messages.
func (c Confirmation) what() string {
	if c.purpose == purposeSave {
		return "this change"
	}
	return "this proposal"
}

// again is the command that issues a new token.
func (c Confirmation) again() string {
	if c.purpose == purposeSave {
		return "run `demiurge core save` again for a new one"
	}
	return "run `demiurge core evolve review " + c.runID + "` again for a new one"
}

// saveConfirmation is what a local save's token confirms: the cores its
// security changes touch, the live revision it is on, the exact tree it
// commits and its security changes.
func saveConfirmation(base string, tree coretree.Tree, sr *Security) Confirmation {
	set := map[string]bool{}
	for _, a := range sr.Approval {
		top, _, nested := strings.Cut(a.Path, "/")
		if !nested {
			top = "global"
		}
		set[top] = true
	}
	return Confirmation{purpose: purposeSave, subject: strings.Join(slices.Sorted(maps.Keys(set)), ","), bound: []string{base, treeDigest(tree), sr.Digest}}
}

// promoteConfirmation is what a review token confirms: one run's proposal
// for one core on one base, with its security changes.
func promoteConfirmation(p Proposal, sr *Security) Confirmation {
	revision := ""
	if p.Revision != nil {
		revision = *p.Revision
	}
	return Confirmation{purpose: purposePromote, subject: p.RunID, runID: p.RunID, bound: []string{p.CoreID, p.Base, revision, sr.Digest}}
}

// treeDigest is a digest of every path, mode and blob of a tree.
func treeDigest(t coretree.Tree) string {
	paths := slices.Sorted(maps.Keys(t))
	h := sha256.New()
	for _, p := range paths {
		e := t[p]
		h.Write([]byte(p + "\x00" + e.Mode.String() + "\x00" + e.Hash.String() + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Tokens issues and checks confirmation tokens under the Host secret key.
// It is safe for concurrent use.
type Tokens struct {
	key     *HostKey
	keyPath string
	now     func() time.Time
}

// NewTokens returns the token issuer of key, or, when key is nil, of the
// key in the file keyPath (LoadHostKey, created on first use and read
// whenever a token is issued or checked); now is the clock of expiries
// (default time.Now).
func NewTokens(key *HostKey, keyPath string, now func() time.Time) *Tokens {
	if now == nil {
		now = time.Now
	}
	return &Tokens{key: key, keyPath: keyPath, now: now}
}

// hostKey returns the given key, else the key file's.
func (t *Tokens) hostKey() (*HostKey, error) {
	if t.key != nil {
		return t.key, nil
	}
	if t.keyPath == "" {
		return nil, demiurge.Errorf(demiurge.EINTERNAL, "core repository: no host key configured; confirmation tokens need one")
	}
	return LoadHostKey(t.keyPath)
}

func tokenMAC(k *HostKey, c Confirmation, expiry string) []byte {
	m := hmac.New(sha256.New, k.b[:])
	var buf []byte
	for _, f := range append([]string{tokenMACDomain, c.purpose, c.subject, expiry}, c.bound...) {
		buf = binary.AppendUvarint(buf[:0], uint64(len(f)))
		m.Write(buf)
		m.Write([]byte(f))
	}
	return m.Sum(nil)
}

// Issue makes a token for c valid for its TTL (SaveTokenTTL,
// ReviewTokenTTL) from now. The error is the key's (LoadHostKey).
func (t *Tokens) Issue(c Confirmation) (string, error) {
	k, err := t.hostKey()
	if err != nil {
		return "", err
	}
	expiry := t.now().Add(c.ttl()).UTC().Format(tokenTimeForm)
	return c.prefix() + c.subject + ":" + expiry + ":" + hex.EncodeToString(tokenMAC(k, c, expiry)), nil
}

// TokenError is why a token does not confirm what it was given for. Its
// message is safe to show: it holds nothing the token did not.
type TokenError struct{ msg string }

func (e *TokenError) Error() string { return e.msg }

// Check verifies token for c: its kind, its subject, its MAC (compared in
// constant time) and its expiry. A *TokenError says why a token does not
// confirm c; any other error is the key's.
func (t *Tokens) Check(token string, c Confirmation) error {
	token = strings.TrimSpace(token)
	refuse := func(format string, args ...any) error {
		return &TokenError{msg: c.noun() + " " + fmt.Sprintf(format, args...)}
	}
	rest, ok := strings.CutPrefix(token, c.prefix())
	if !ok {
		for _, other := range []string{SaveTokenPrefix, TokenPrefix} {
			if strings.HasPrefix(token, other) {
				kind := "an evolve review token"
				if other == SaveTokenPrefix {
					kind = "a core save confirmation token"
				}
				return refuse("is %s; want one starting %s", kind, c.prefix())
			}
		}
		return refuse("is malformed: want %s<subject>:<expiry>:<mac>", c.prefix())
	}
	macAt := strings.LastIndexByte(rest, ':')
	expAt := -1
	if macAt > 0 {
		expAt = strings.LastIndexByte(rest[:macAt], ':')
	}
	if expAt < 0 {
		return refuse("is malformed: want %s<subject>:<expiry>:<mac>", c.prefix())
	}
	subject, expiry, macHex := rest[:expAt], rest[expAt+1:macAt], rest[macAt+1:]
	when, terr := time.Parse(tokenTimeForm, expiry)
	mac, herr := hex.DecodeString(macHex)
	if terr != nil || herr != nil || len(mac) != sha256.Size {
		return refuse("is malformed: want %s<subject>:<expiry>:<mac>", c.prefix())
	}
	if subject != c.subject {
		if c.purpose == purposeSave {
			return refuse("is for changes to %s, not %s", subject, c.subject)
		}
		return refuse("is for evolve run %s, not %s", subject, c.subject)
	}
	k, err := t.hostKey()
	if err != nil {
		return err
	}
	if !hmac.Equal(mac, tokenMAC(k, c, expiry)) {
		return refuse("does not confirm %s", c.what())
	}
	if !t.now().Before(when) {
		return refuse("expired at %s; %s", when.Format(time.RFC3339), c.again())
	}
	return nil
}
