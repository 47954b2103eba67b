package demiurge

// Usage is what a provider reports one model call cost, in tokens. The
// zero value means the provider reported nothing. CachedTokens are the part
// of InputTokens the provider served from its prompt cache.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	CachedTokens int64 `json:"cached_tokens,omitempty"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens,
		CachedTokens: u.CachedTokens + v.CachedTokens}
}

// IsZero reports whether nothing was counted.
func (u Usage) IsZero() bool { return u.InputTokens == 0 && u.OutputTokens == 0 && u.CachedTokens == 0 }
