package host

import (
	"context"
	"math"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/store"
)

// DoctorHosts is the report's view of the Hosts sharing the ledger: the
// live ones with their leases, and how many others the hosts table holds.
type DoctorHosts struct {
	Live []DoctorHost `json:"live"`
	// Gone counts Hosts that never stopped and no longer run (a crash):
	// the next Host to open the ledger reconciles their work.
	Gone int `json:"gone"`
	// Stopped counts Hosts that stopped within the last day.
	Stopped int `json:"stopped"`
}

// DoctorHost is one live Host and the age of its lease.
type DoctorHost struct {
	HostID      string `json:"host_id"`
	Hostname    string `json:"hostname"`
	PID         int    `json:"pid"`
	StartedAt   string `json:"started_at"`
	HeartbeatAt string `json:"heartbeat_at"`
	// LeaseAgeSeconds is the time since the lease was last renewed.
	LeaseAgeSeconds float64 `json:"lease_age_seconds"`
	// ExpiresInSeconds is the time left on the lease; negative for a Host
	// past its lease whose process on this machine still runs (a stalled
	// heartbeat: it counts as live, its work is not reconciled).
	ExpiresInSeconds float64 `json:"expires_in_seconds"`
}

// doctorHosts reads the hosts table of the open ledger into rep.Hosts.
func doctorHosts(ctx context.Context, db *store.DB, now time.Time, rep *DoctorReport) {
	rep.Hosts = DoctorHosts{Live: []DoctorHost{}}
	reg, err := db.ListHosts(ctx, store.MaxHostLimit)
	if err != nil {
		rep.fail("database.query_failed", err, "check "+rep.Database.Path)
		return
	}
	rep.Hosts.Stopped = reg.Stopped
	for _, h := range reg.Running {
		if !h.Live {
			rep.Hosts.Gone++
			continue
		}
		rep.Hosts.Live = append(rep.Hosts.Live, DoctorHost{
			HostID: h.HostID, Hostname: h.Hostname, PID: h.PID,
			StartedAt: demiurge.FormatTime(h.StartedAt), HeartbeatAt: demiurge.FormatTime(h.HeartbeatAt),
			LeaseAgeSeconds:  seconds(now.Sub(h.HeartbeatAt)),
			ExpiresInSeconds: seconds(h.ExpiresAt.Sub(now)),
		})
	}
}

// seconds is d in seconds, to the millisecond.
func seconds(d time.Duration) float64 { return math.Round(d.Seconds()*1000) / 1000 }
