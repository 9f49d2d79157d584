//go:build !unix

package gdv

import "time"

// cpuTime is unknown here: records/cpu-s is then not meaningful.
func cpuTime() time.Duration { return 0 }
