package mcpserve

import "time"

// SetWindow changes how long s waits for the describe answers.
func SetWindow(s *Server, d time.Duration) {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.opts.Window = d
}
