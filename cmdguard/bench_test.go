package cmdguard

import "testing"

// BenchmarkReview measures typical commands: an allowed read, a prompted
// test run, and a blocked nested payload.
func BenchmarkReview(b *testing.B) {
	for _, bc := range []struct{ name, cmd string }{
		{"allow", "git log -1 --oneline && rg needle . | head -20"},
		{"prompt", "go test ./... -run TestReview -count=1"},
		{"block", `env MODE=test sh -c 'echo "$(rm -rf /)"'`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Review(bc.cmd)
			}
		})
	}
}
