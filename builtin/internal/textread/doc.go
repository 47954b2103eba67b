// Package textread decodes UTF-8 through one fixed buffer, so that a
// window of a file can be skipped to, taken and measured without holding
// more than the buffer.
package textread
