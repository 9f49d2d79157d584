// Package memwatch measures the memory of a benchmark's phases in the test process, where the
// server, its job workers and the benchmark share one heap: the peak live heap while a phase
// runs (sampled every 50 ms), and the process's peak resident set.
package memwatch

import (
	"bufio"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Peak samples the live heap from Start until MB.
type Peak struct {
	stop chan struct{}
	done sync.WaitGroup
	peak uint64
}

// Start collects garbage (the phase's peak, not the last one's leftovers) and starts sampling.
func Start() *Peak {
	runtime.GC()
	h := &Peak{stop: make(chan struct{})}
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	h.done.Go(func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			h.peak = max(h.peak, s[0].Value.Uint64())
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	})
	return h
}

// MB stops the sampling and returns the peak in MiB.
func (h *Peak) MB() float64 {
	close(h.stop)
	h.done.Wait()
	return float64(h.peak) / (1 << 20)
}

// RSSPeakMB is the process's peak resident set (VmHWM of /proc/self/status) in MiB; 0 where
// the file does not exist.
func RSSPeakMB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}
