package demiurge

// Core revision events: the shared live revision of the core repository
// that every Host of one ledger follows (aggregate core "live").
const (
	AggCore    = "core"
	CoreLiveID = "live" // the aggregate id of the shared live revision

	EvCoreRevisionPublished = "core.revision_published"
	EvCoreLiveChanged       = "core.live_changed"
)

// CoreRevisionPublishedPayload records a revision of the core repository
// stored in the ledger (its git objects are the core_revisions row written
// beside the event): Parent is its first parent, "" for the first
// revision the ledger holds.
type CoreRevisionPublishedPayload struct {
	Revision string `json:"revision"`
	Parent   string `json:"parent,omitempty"`
	Objects  int    `json:"objects"`
	Bytes    int    `json:"bytes"`
	HostID   string `json:"host_id,omitempty"`
}

func (CoreRevisionPublishedPayload) Type() string { return EvCoreRevisionPublished }

// CoreLiveChangedPayload records a move of the shared live revision: Op is
// what moved it (save, promote, rollback, init: the first Host of a ledger
// publishing its live revision), Previous the live revision before ("" for
// the first).
type CoreLiveChangedPayload struct {
	Revision string `json:"revision"`
	Previous string `json:"previous,omitempty"`
	Op       string `json:"op"`
	HostID   string `json:"host_id,omitempty"`
}

func (CoreLiveChangedPayload) Type() string { return EvCoreLiveChanged }

// CoreLive is the shared live revision of the core repository.
type CoreLive struct {
	Revision string `json:"revision"`
	Previous string `json:"previous,omitempty"`
	Op       string `json:"op"`
	HostID   string `json:"host_id,omitempty"`
	// LastSeq is the seq of the core.live_changed event that set it.
	LastSeq   int64  `json:"last_seq"`
	UpdatedAt string `json:"updated_at"`
}

// CoreRevision is one revision of the core repository as the ledger
// stores it: a git pack of the commit and of every object of its tree
// that its parent's tree lacks (all of them when Parent is "").
type CoreRevision struct {
	Revision string
	Parent   string
	Pack     []byte
	Objects  int
}

// CorePublication moves the shared live revision from Expected ("" when
// none is published yet) to the last of Revisions, storing each of them
// first (oldest first; a revision the ledger holds already is skipped).
type CorePublication struct {
	Expected  string
	Revisions []CoreRevision
	Op        string
	HostID    string
}
