// Package policy holds the Host's pure decisions about authority: which
// capability grants admit which requests. Functions take plain values and
// return verdicts; nothing here performs I/O. It imports only the root
// vocabulary and may be imported by every other package. The approval
// decisions are those of spec tool-runtime §2.2 and §4.
package policy
