package session

import (
	"strings"

	"github.com/demiurge/demiurge"
)

// CLI conversation facts: the local command line is one conversation per core,
// owned by the local operator.
const (
	CLIChannel = "cli"
	CLIKey     = "cli:operator:local"
)

// Conversation names one external conversation of one core: the key of a
// session binding.
type Conversation struct {
	CoreID  string
	Channel string
	Key     string
}

// CLIConversationKey returns the conversation of the local CLI for coreID
// (channel "cli", key "cli:operator:local"). Runs that name neither a new nor
// an explicit session continue the session bound to it.
func CLIConversationKey(coreID string) Conversation {
	return Conversation{CoreID: coreID, Channel: CLIChannel, Key: CLIKey}
}

// ConversationKey builds `channel:scope:id1[:id2…][:thread:<tid>]`.
// channel and scope must be lowercase identifiers
// (^[a-z][a-z0-9_]*$); at least one id is required and none may be empty. Ids
// and the thread id are percent-encoded with no safe characters, so ':' '/'
// and ' ' never split a key. An empty threadID is ignored. Errors are EINVALID
// with the exact messages of the spec.
func ConversationKey(channel, scope string, ids []string, threadID string) (string, error) {
	if !isIdentifier(channel) {
		return "", demiurge.Errorf(demiurge.EINVALID, "conversation key channel must be a lowercase identifier")
	}
	if !isIdentifier(scope) {
		return "", demiurge.Errorf(demiurge.EINVALID, "conversation key scope must be a lowercase identifier")
	}
	if len(ids) == 0 {
		return "", demiurge.Errorf(demiurge.EINVALID, "conversation key requires at least one id")
	}
	var b strings.Builder
	b.WriteString(channel)
	b.WriteByte(':')
	b.WriteString(scope)
	for _, id := range ids {
		if id == "" {
			return "", demiurge.Errorf(demiurge.EINVALID, "conversation key id must not be empty")
		}
		b.WriteByte(':')
		b.WriteString(demiurge.PercentEncode(id))
	}
	if threadID != "" {
		b.WriteString(":thread:")
		b.WriteString(demiurge.PercentEncode(threadID))
	}
	return b.String(), nil
}

// DefaultConversationKey is the key of an external conversation whose adapter
// named none: `<channel>:principal:<principal_key>`, with the
// principal key encoded like any id.
func DefaultConversationKey(channel, principalKey string) (string, error) {
	return ConversationKey(channel, "principal", []string{principalKey}, "")
}

// isIdentifier reports whether s matches ^[a-z][a-z0-9_]*$.
func isIdentifier(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
