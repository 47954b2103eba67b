package demiurge

// Usage is what a provider reports one model call cost, in tokens. The
// zero value means the provider reported nothing.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens}
}

// IsZero reports whether nothing was counted.
func (u Usage) IsZero() bool { return u.InputTokens == 0 && u.OutputTokens == 0 }
