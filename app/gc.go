package app

import "runtime/debug"

// defaultGCPercent is the garbage collector's target when GOGC is unset: 200 instead of Go's
// 100. A request allocates ~20 KB that is garbage when it ends and the live heap is small, so
// collecting half as often cut the server's CPU per GET /me by ~15% on the bench
// (docs/perf-notes/2026-11-23-me-round-2.md) for a peak heap up to three times the live heap (twice with 100). GOGC in the environment
// wins; GOMEMLIMIT, when set, still bounds the heap (the runtime collects earlier near it).
const defaultGCPercent = 200

// setDefaultGC applies defaultGCPercent unless getenv("GOGC") is set.
func setDefaultGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}
