// Package dialog holds the tools about the turn itself: clarify, which
// asks the user a question and ends the turn, and tools_list, which reads
// the catalog the call was bound to.
package dialog
