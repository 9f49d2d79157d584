//go:build unix

package gdv

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) the process has used: on a machine shared with
// other work, records per CPU second say more than records per second.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
