// Package provider implements demiurge.Provider three times: Fake (offline,
// scripted), OpenAI (Chat Completions and compatible servers) and Anthropic
// (Messages), and resolves which one a turn uses (Resolve).
//
// # Usage
//
// The host calls Resolve with the command-line flags, the core's and the
// fallback core's model section, the providers: section of config.yaml and
// the fake-script path, and gets a demiurge.Provider plus a description of
// what was chosen. Tests and tools may build providers directly with
// NewFake, NewOpenAI and NewAnthropic.
//
// The HTTP providers are small hand-written net/http clients. Complete with
// a nil stream callback sends a plain JSON request; with a callback it asks
// for server-sent events and passes text deltas to the callback as they
// arrive. Message mapping follows spec host-runtime §4.4 (and the fake's
// script rules DESIGN §4): for OpenAI, an
// assistant message with tool calls carries tool_calls with JSON-string
// arguments (content null when empty) and a tool message carries
// tool_call_id and name; for Anthropic, system messages become the top-level
// system text, tool messages become tool_result blocks (consecutive ones in
// one user message) and max_tokens defaults to 4096. Tool-call arguments that
// are not a JSON object arrive as {"_raw": value}.
//
// # Concurrency
//
// Every provider is safe for concurrent use. The stream callback runs on the
// goroutine that called Complete, never on another. Complete starts no
// goroutine that outlives it: its per-attempt timers are stopped before it
// returns (pooled connections belong to the http.Transport).
//
// The Fake returned by Resolve is shared by the whole process for a given
// script path, so the script's items are consumed in order across turns (and
// across cores) as the CLI contract requires; each call takes the next item under a
// mutex.
//
// # Failure modes
//
// Errors are *demiurge.Error:
//
//   - EUNAVAILABLE: the server could not be reached, reset the connection,
//     answered 429 or 5xx (after retries), or a stream broke off;
//   - ETIMEOUT: an attempt exceeded Options.Timeout (default 120 s), a stream
//     stayed silent for Options.IdleTimeout (default 60 s, also the wait for
//     the first byte), or the caller's deadline passed;
//   - ECANCELED: the caller's ctx was cancelled;
//   - EUNAUTHORIZED: HTTP 401 or 403;
//   - EINVALID: any other 4xx, a malformed response or stream, an unknown
//     provider profile;
//   - ECONFIG: a missing key, a bad base URL or api_mode, a bad fake script.
//
// HTTP errors read "<profile>: HTTP <status>: <excerpt>", the excerpt being at
// most 200 characters of the server's error message on one line. The API key
// never appears in an error: it is scrubbed (raw and URL-escaped) from every
// message before it is shortened, messages never quote request URLs, and the
// key is held as a demiurge.Secret.
//
// Retries: 429, 408, 5xx and connection failures are retried up to
// Options.MaxRetries times (default 3) with jittered exponential backoff, or
// after the server's Retry-After (seconds or HTTP date, capped at
// Options.MaxRetryAfter). A response whose body has begun to arrive is never
// retried, so streamed output is never repeated; the one exception is an
// overload or rate-limit error event that arrives before any delta was
// passed on. Redirects are not followed (the key header would go along).
//
// # Testing
//
// Tests run the clients against httptest servers speaking each wire
// protocol; Options.Sleep and Options.Now keep backoff instant and
// deterministic. FuzzSSE fuzzes the event-stream parser and both stream
// decoders, with a seed corpus in testdata/fuzz.
package provider
