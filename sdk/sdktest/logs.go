package sdktest

import (
	"strings"
	"sync"
)

// logBuffer keeps the kernel's log (warnings and errors, capsules' own
// included) for Logs.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// Logs is everything the kernel logged at warning level or above so far,
// as slog text lines: a test asserts that something was reported (a silent
// capsule named, a refused contribution) the way an operator would see it.
func (k *Kernel) Logs() string {
	k.logs.mu.Lock()
	defer k.logs.mu.Unlock()
	return k.logs.b.String()
}
