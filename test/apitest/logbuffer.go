package apitest

import (
	"bytes"
	"strings"
	"sync"
)

// LogBuffer is a log sink a server or process writes to from its goroutines while the test
// reads it: Write and String under one lock.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Lines counts the lines that contain substr.
func (l *LogBuffer) Lines(substr string) int {
	n := 0
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}
