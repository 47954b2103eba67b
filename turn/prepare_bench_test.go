package turn

import (
	"testing"

	"github.com/demiurge/demiurge"
)

// BenchmarkPrepare10k fits a 10,000-message history (2,500 turns with
// 2 KiB tool results) into a 128k window: the first fit of a turn counts
// the window's messages (cached by id after), each step then selects.
func BenchmarkPrepare10k(b *testing.B) {
	w, _ := newWindow(demiurge.ModelLimits{ContextWindow: 128000, MaxOutputTokens: 16384, Tokenizer: "o200k_base"}, coreModel(), nil)
	var hist []demiurge.Message
	for n := 0; n < 2500; n++ {
		hist = append(hist, histTurn(n, 2048)...)
	}
	cache := &countCache{}
	l := contextLayers{soul: "SOUL", history: hist}
	newFitted(w, l, nil, cache) // the counts of earlier turns
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		f := newFitted(w, l, nil, cache)
		if _, err := f.prepare("now", nil); err != nil {
			b.Fatal(err)
		}
	}
}
