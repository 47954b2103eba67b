package sandbox

import "sync"

var staticOnce struct {
	sync.Once
	missing string
}

// missingFeature is the cheap check made before every start: a feature
// whose absence the helper would only discover after the namespaces were
// made (or the simulated one). "" when nothing is missing.
func missingFeature(simulate string) string {
	if simulate != "" {
		return simulate
	}
	staticOnce.Do(func() {
		if m := staticMissing(); len(m) > 0 {
			staticOnce.missing = m[0]
		}
	})
	return staticOnce.missing
}

// Probe reports the sandbox's state for doctor: with the sandbox on, it
// builds one with p and no command (one helper process) and lists every
// kernel feature that is missing.
func Probe(s Settings, p Policy) Report {
	var r Report
	r.Mode, r.Network = s.names()
	if !s.Enabled() {
		return r
	}
	r.Landlock = landlockABI()
	r.Missing = staticMissing()
	if p.simulateMissing != "" {
		r.Missing = append(r.Missing, p.simulateMissing)
	}
	if len(r.Missing) > 0 {
		r.Error = Unavailable(r.Missing[0]).Error()
		return r
	}
	if err := probeHelper(p); err != nil {
		r.Error = err.Error()
		return r
	}
	r.Working = true
	return r
}
