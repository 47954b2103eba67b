package demiurge

// EventPayloads returns the zero value of every event payload struct, one
// per event type, in the order of the event type constants. The store
// projects through them and its tests check its event table against them.
func EventPayloads() []EventPayload {
	return []EventPayload{
		TaskSubmittedPayload{}, TaskStartedPayload{}, TaskSucceededPayload{}, TaskFailedPayload{},
		TaskCancelledPayload{}, TaskLostPayload{}, TaskBlockedPayload{}, TaskLogPayload{},
		TaskCompletionReadyPayload{}, TaskCompletionAcknowledgedPayload{}, TaskCancelRequestedPayload{},
		TaskProcessRecordedPayload{}, TaskWriteScopeClaimedPayload{},

		MCPServerDeniedPayload{}, MCPServerFailedPayload{},

		DeliveryQueuedPayload{}, DeliverySendingPayload{}, DeliverySentPayload{}, DeliveryFailedPayload{},
		DeliveryRetryScheduledPayload{}, DeliveryUnknownPayload{}, DeliveryUnroutedPayload{},

		WorkEnqueuedPayload{}, WorkClaimedPayload{}, WorkRunningPayload{}, WorkSendingPayload{},
		WorkHeartbeatPayload{}, WorkSucceededPayload{}, WorkFailedPayload{}, WorkCancelledPayload{},
		WorkUnknownPayload{}, WorkAcknowledgedPayload{}, WorkCorruptPayload{}, WorkRecoveredPayload{},

		SessionCreatedPayload{}, SessionUpdatedPayload{}, SessionResumedPayload{},
		SessionBindingReboundPayload{}, SessionBindingConflictPayload{},

		TurnStartedPayload{}, TurnCompletedPayload{}, TurnFailedPayload{}, TurnCancelledPayload{}, TurnLostPayload{},

		MessagePersistedPayload{}, MessageUpdatedPayload{}, ArtifactStoredPayload{},

		ToolCallStartedPayload{}, ToolCallCompletedPayload{}, ToolCallFailedPayload{},

		ModelStepCompletedPayload{},

		SchedulerScheduledPayload{}, SchedulerClaimedPayload{}, SchedulerCompletedPayload{}, SchedulerErrorPayload{},

		PrincipalOwnerLookupDeniedPayload{}, PrincipalOperatorIssuedPayload{},

		HostStartedPayload{}, HostStoppedPayload{}, HostReconciledPayload{},

		AgentSpawnStartedPayload{}, AgentSpawnCompletedPayload{}, AgentSpawnBlockedPayload{},
		AgentSpawnFailedPayload{}, AgentSpawnRejectedPayload{},
		AgentRunStartedPayload{}, AgentRunCompletedPayload{},
		StateModuleUpdatedPayload{},

		ChannelInboundAcceptedPayload{}, ChannelInboundClaimedPayload{}, ChannelInboundStartedPayload{},
		ChannelInboundCompletedPayload{}, ChannelInboundRetryScheduledPayload{}, ChannelInboundDeadLetteredPayload{},

		CoreRevisionPublishedPayload{}, CoreLiveChangedPayload{},
	}
}
