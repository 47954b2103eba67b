// Package demiurge is the vocabulary of the Demiurge host: identifiers, events,
// the records every projection returns, principal scopes, model and tool
// messages, effect requests and results, the nouns several engines share
// (session requests, turn starts, slot specs with their phase environments
// and results, delivery intents, blocks and routes), and the coded domain
// error.
//
// The package imports only the standard library. Every other package of the
// module may import it; it imports nothing of ours. Pure domain rules (state
// transitions, validation of identifiers) live here too, so that storage,
// engines and adapters agree on them. So do the event payloads: each event
// type has one struct (events_*.go, listed by EventPayloads) that writers
// pass to NewEvent and readers get back from Decode or DecodePayload.
// Engines meet through small interfaces they declare with these types
// instead of importing each other: the turn engine runs the slot pipeline,
// resolves sessions and enqueues deliveries without importing slot,
// session or delivery. The nouns are those of spec host-runtime (event
// types §1.5, task statuses §1.7, work items §1.8, principal scopes §2.4,
// model messages §4.4).
package demiurge
