// Package gateway runs the chat channels of the Agent Cores behind a durable
// ChannelInbox (spec surfaces §3.17; DESIGN §2 "Channels run in demiurge
// gateway behind a durable inbox"). It is an engine: it declares the Store,
// Runner and channel seams it needs, and the composition root (host) wires
// the store, the turn execution and the channel adapters (package
// channels/…, leaves that know nothing of the gateway).
//
// # Delivery semantics
//
//   - Accept: an adapter authenticates, allowlists and parses a platform
//     message, then calls Inbox.Accept, which commits the envelope under its
//     dedup key (core, channel, platform event key) — with the poller's
//     cursor, in the same transaction — before the adapter acknowledges
//     the platform (2xx, offset, \Seen). A store failure is returned, and
//     the adapter must not acknowledge. The same message accepted twice is
//     a duplicate receipt, never a second inbound. Accepts without a
//     cursor (the webhook's) are group-committed: an accept that finds no
//     commit waiting for the store's writer starts one, and every accept
//     handed in until its transaction begins joins it, so a burst costs
//     one transaction and a lone message is committed at once; each
//     caller still returns only after its own envelopes are committed.
//   - Admission: the worker claims the oldest unfinished inbound of each
//     conversation (never two of one conversation at once, across Host
//     processes), reserves its turn id durably (status running), and runs
//     it as a turn on the conversation's session (Runner.RunInbound).
//     Channel commands (/new, /sessions, /resume N, /stop, /help) are
//     answered by the gateway itself and start no turn.
//   - Failure: an admission that fails before a turn starts is retried
//     with exponential backoff and jitter, and dead-lettered after
//     Options.MaxAttempts with its redacted reason (gateway status shows
//     it); an invalid request is dead-lettered at once. A turn that ran
//     and failed is done: its reply is "Turn failed: <reason>".
//   - Crash: an inbound claimed by a Host that is gone is claimed again.
//     If the turn id it reserved names a turn that started, that turn
//     stands (restart recovery made it lost, its deliveries unknown) and
//     the inbound is done as recovered: no second turn, no second reply.
//     Otherwise the turn never started and the inbound runs now.
//   - Busy mode, per conversation: in interrupt mode a new message (not a
//     command) cancels the conversation's running turn in this process;
//     in queue mode it waits. /stop cancels the running turn in both.
//     An interrupted turn's inbound is done as cancelled, never replayed.
//
// # Channels and isolation
//
// Every channel runs on its own goroutine under a poller lease in the store
// (two gateways on one home never run the same channel); a channel whose
// Run fails is recorded as retrying with its redacted last error and run
// again after its own backoff (1 s doubling to 60 s), while every other
// channel, the inbox worker, the scheduler and the delivery loop go on
// (the original's CH-04).
//
// # Concurrency
//
// Gateway owns its goroutines: Start starts the channel supervisors and the
// worker; Close stops the channels, stops claiming, lets in-flight turns
// finish until its context ends (the drain), cancels what is left and
// waits for every goroutine.
package gateway
