// Package files holds the workspace file tools: read_file, write_file,
// patch and search_files. Each prepares its call once: the path resolves
// to a target inside the workspace sandbox (package workspace) before
// approval, the approval names the target, and an approved call resolves
// the path again before it acts.
//
// # Bounded reads
//
// read_file streams the file through one 64 KiB buffer: it decodes up to
// the end of its window (at most 20,000 characters), then counts what it
// leaves out only if at most 1 MiB remains; otherwise the note names the
// remaining bytes and the next offset, and data has total_bytes but no
// total_chars. search_files walks the tree lazily in sorted path order,
// skips sensitive directories (unless include_sensitive), the Host's
// private paths and links that leave its scope, reads at most 200,000
// characters of each file as text (NUL bytes included, as the original
// does: the spec skips no binary files), stops at max_results (≤ 200)
// matches, and stops after 100,000 directory entries, saying so. Memory
// does not grow with file size.
package files
