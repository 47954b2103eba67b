package slot

// Data keys of the diagnostic events (demiurge.SlotEvent.Data).
const (
	eventDataSlotPath   = "slot_path"
	eventDataLane       = "lane"
	eventDataElapsed    = "elapsed_ms"
	eventDataPolicy     = "failure_policy"
	eventDataDiscarded  = "discarded_intents"
	eventDataReturnType = "return_type"
)
