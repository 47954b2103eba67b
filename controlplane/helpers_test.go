package controlplane_test

import (
	"context"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

func newCP(t *testing.T) (*controlplane.ControlPlane, *store.DB) {
	db := demiurgetest.MustOpenDB(t)
	return controlplane.New(db, controlplane.Options{Now: func() time.Time { return time.Now().UTC() }}), db
}

func submit(t *testing.T, cp *controlplane.ControlPlane, kind string, src demiurge.TaskOrigin) demiurge.Task {
	t.Helper()
	tk, err := cp.SubmitTask(context.Background(), demiurge.TaskSpec{Kind: kind}, src)
	if err != nil {
		t.Fatalf("submit %s: %v", kind, err)
	}
	return tk
}

func wantCode(t *testing.T, err error, code, msg string) {
	t.Helper()
	if demiurge.ErrorCode(err) != code || (msg != "" && err.Error() != msg) {
		t.Fatalf("error = %v (code %q), want %s %q", err, demiurge.ErrorCode(err), code, msg)
	}
}

func countEvents(t *testing.T, db *store.DB, id, typ string) int {
	t.Helper()
	evs, err := db.Events(context.Background(), demiurge.EventFilter{AggregateType: demiurge.AggTask, AggregateID: id, Type: typ, Limit: demiurge.MaxEventLimit})
	if err != nil {
		t.Fatal(err)
	}
	return len(evs)
}
