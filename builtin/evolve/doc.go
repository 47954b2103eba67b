// Package evolve holds evolve_core and rollback_core over the core
// repository. Each evolve action is approved separately, and a promotion
// is never remembered for the session.
package evolve
