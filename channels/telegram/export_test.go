package telegram

import (
	"context"
	"encoding/json"

	"github.com/demiurge/demiurge"
)

// InboundForTest normalises one update (as demiurgetest builds them) the
// way Run does, files stored.
func InboundForTest(c *Channel, u map[string]any) (demiurge.InboundEnvelope, error) {
	b, err := json.Marshal(u)
	if err != nil {
		return demiurge.InboundEnvelope{}, err
	}
	var up update
	if err := json.Unmarshal(b, &up); err != nil {
		return demiurge.InboundEnvelope{}, err
	}
	env, _ := c.inbound(context.Background(), up)
	return env, nil
}
