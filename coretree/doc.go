// Package coretree is the vocabulary of an agents tree at one revision:
// its files (Tree: slash path relative to the agents root -> Entry, a git
// blob id and file mode), the cores it holds (top-level directories with
// an agent.yaml), and what differs between two trees (Diff). The git
// storage (gitrepo) reads and writes trees, the gates (coregate) judge
// them and the core repository (corerepo) moves between them; this
// package only names them, so none of those needs another for its nouns.
//
// It imports nothing of ours beyond the standard library.
package coretree
