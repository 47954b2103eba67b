// Package demiurge is the vocabulary of the Demiurge host: identifiers, events,
// the records every projection returns, principal scopes, model and tool
// messages, effect requests and results, and the coded domain error.
//
// The package imports only the standard library. Every other package of the
// module may import it; it imports nothing of ours. Pure domain rules (state
// transitions, validation of identifiers) live here too, so that storage,
// engines and adapters agree on them. So do the event payloads: each event
// type has one struct (events_*.go, listed by EventPayloads) that writers
// pass to NewEvent and readers get back from Decode or DecodePayload.
package demiurge
