package host_test

import (
	"context"
	"testing"

	"github.com/demiurge/demiurge/host"
)

// Doctor reads the environment through its option, and creates a home it
// is pointed at without opening a Host.
func TestDoctorFreshHomeWithInjectedEnvironment(t *testing.T) {
	env := map[string]string{"DEMIURGE_TIMEZONE": "Europe/Paris", host.SimulateMissingEnv: "Landlock ABI 3 or newer"}
	dir := t.TempDir()
	rep, err := host.Doctor(context.Background(), host.DoctorOptions{Home: dir, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Home != dir || rep.CoreID != "assistant" || !rep.Database.OK || !rep.Repository.Consistent || len(rep.Cores) != 2 {
		t.Fatalf("report of a fresh home: %+v", rep)
	}
	if rep.Timezone.Name != "Europe/Paris" || rep.Timezone.Source != "env:DEMIURGE_TIMEZONE" {
		t.Fatalf("timezone %+v, want the injected one", rep.Timezone)
	}
	if rep.OK || rep.Sandbox.Working || len(rep.Findings) == 0 || rep.Findings[len(rep.Findings)-1].Code != "sandbox.missing_feature" {
		t.Fatalf("a simulated missing sandbox feature is a finding: %+v", rep)
	}
}
