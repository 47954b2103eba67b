package coregate

import (
	"path"
	"strings"
	"unicode"
)

// Path rules of the gates, as pure functions of a
// slash path relative to the agents root.

// generatedDirs are directory names that only tools generate: caches,
// virtual environments and installed packages.
var generatedDirs = map[string]bool{
	"__pycache__":   true,
	".pytest_cache": true,
	".mypy_cache":   true,
	".ruff_cache":   true,
	"node_modules":  true,
	".venv":         true,
	".tox":          true,
}

// generatedSuffixes are file name endings of compiled artifacts.
var generatedSuffixes = []string{".pyc", ".pyo", ".pyd"}

// runtimeTopDirs are top-level names of runtime state that must never be
// part of the agents tree.
var runtimeTopDirs = map[string]bool{
	".evolve":  true,
	"runtime":  true,
	"logs":     true,
	"runs":     true,
	"history":  true,
	"registry": true,
}

// dependencyFiles are package-manager manifests and lock files: a core
// runs on the Host's shared dependencies (dependencies.mode host_shared)
// and may not bring its own.
var dependencyFiles = map[string]bool{
	"pyproject.toml":      true,
	"uv.lock":             true,
	"requirements.txt":    true,
	"requirements.in":     true,
	"pipfile":             true,
	"pipfile.lock":        true,
	"poetry.lock":         true,
	"package.json":        true,
	"package-lock.json":   true,
	"npm-shrinkwrap.json": true,
	"yarn.lock":           true,
	"pnpm-lock.yaml":      true,
	"bun.lockb":           true,
	"go.mod":              true,
	"go.sum":              true,
	"cargo.toml":          true,
	"cargo.lock":          true,
	"gemfile":             true,
	"gemfile.lock":        true,
	"composer.json":       true,
	"composer.lock":       true,
}

// artifactReason returns why p is a generated or runtime artifact, or "".
func artifactReason(p string) string {
	parts := strings.Split(p, "/")
	if runtimeTopDirs[parts[0]] && len(parts) > 1 {
		return "runtime state directory " + parts[0] + "/"
	}
	for _, d := range parts[:len(parts)-1] {
		if generatedDirs[d] {
			return "generated artifact directory " + d + "/"
		}
	}
	base := parts[len(parts)-1]
	for _, s := range generatedSuffixes {
		if strings.HasSuffix(base, s) {
			return "generated artifact *" + s
		}
	}
	return ""
}

// CleanableArtifact reports whether an untracked p is removed from an
// evolve run tree before review (Python caches, compiled files, runtime
// state directories). Other artifacts stay and
// fail the artifact gate.
func CleanableArtifact(p string) bool {
	parts := strings.Split(p, "/")
	if runtimeTopDirs[parts[0]] && len(parts) > 1 {
		return true
	}
	for _, d := range parts[:len(parts)-1] {
		switch d {
		case "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache":
			return true
		}
	}
	base := parts[len(parts)-1]
	return strings.HasSuffix(base, ".pyc") || strings.HasSuffix(base, ".pyo")
}

// dependencyReason returns why p is a dependency file, or "".
func dependencyReason(p string) string {
	base := strings.ToLower(path.Base(p))
	if dependencyFiles[base] || (strings.HasPrefix(base, "requirements") && (strings.HasSuffix(base, ".txt") || strings.HasSuffix(base, ".in"))) {
		return "dependency file " + path.Base(p) + " (cores use the Host's shared dependencies)"
	}
	return ""
}

// nameReason returns why the path itself is unsafe, or "": nested git
// metadata, or names with control characters or backslashes (which do not
// survive every file system and could forge lines in reports).
func nameReason(p string) string {
	for _, part := range strings.Split(p, "/") {
		if strings.EqualFold(part, ".git") {
			return "nested git metadata (.git) is not allowed"
		}
	}
	for _, r := range p {
		if unicode.IsControl(r) || r == '\\' {
			return "file name contains control characters or a backslash"
		}
	}
	return ""
}
