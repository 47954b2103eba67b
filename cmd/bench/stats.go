package main

import (
	"fmt"
	"slices"
	"time"
)

// summary is the median and 95th percentile of a set of samples.
type summary struct{ median, p95 time.Duration }

// summarize sorts a copy of samples; the median of an even count is the
// mean of the middle two, and p95 is the nearest-rank percentile (the
// smallest sample with at least 95% of the samples at or below it).
func summarize(samples []time.Duration) summary {
	if len(samples) == 0 {
		return summary{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	rank := (95*n + 99) / 100 // ceil(0.95 n), 1-based
	return summary{median: med, p95: s[rank-1]}
}

// ms formats a duration in milliseconds with two decimals.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

// timedRows is the median row (checked against limit) and the p95 row
// (informational) of one timed figure.
func timedRows(figure string, samples []time.Duration, limit time.Duration) []row {
	s := summarize(samples)
	return []row{
		{figure: figure + ", median", value: ms(s.median), target: fmt.Sprintf("≤ %g ms", float64(limit)/float64(time.Millisecond)), verdict: check(s.median <= limit)},
		{figure: figure + ", p95", value: ms(s.p95)},
	}
}
