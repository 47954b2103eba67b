package turn

import (
	"encoding/json"
	"sync"

	"github.com/demiurge/demiurge"
)

// endPayloads are the event payloads the end of a turn encodes: its answer
// and deliveries (message, delivery and work item, and the delivery's
// outcome), its last step and tool calls, and its terminal event.
var endPayloads = []demiurge.EventPayload{
	demiurge.MessagePersistedPayload{Content: &demiurge.MessageBody{}},
	demiurge.DeliveryQueuedPayload{}, demiurge.DeliverySendingPayload{}, demiurge.DeliverySentPayload{},
	demiurge.DeliveryUnroutedPayload{}, demiurge.DeliveryFailedPayload{},
	demiurge.WorkEnqueuedPayload{}, demiurge.WorkSendingPayload{}, demiurge.WorkSucceededPayload{}, demiurge.WorkFailedPayload{},
	demiurge.ModelStepCompletedPayload{}, demiurge.ToolCallCompletedPayload{}, demiurge.ToolCallFailedPayload{},
	demiurge.TurnCompletedPayload{}, demiurge.TurnFailedPayload{}, demiurge.TurnCancelledPayload{},
}

// warmEndEncoders makes encoding/json build its encoder of each of
// endPayloads, once per process. encoding/json builds a type's encoder by
// reflection the first time it meets the type, which in a process that
// runs one turn (`demiurge run`) is the turn's end, after the model's
// answer; a turn calls this while the model works instead.
var warmEndEncoders = sync.OnceFunc(func() {
	for _, p := range endPayloads {
		_, _ = json.Marshal(p)
	}
})
