package admin

import "net/url"

// RunInfo is what a running daemon's admin server tells `astrid ui`,
// which the daemon writes 0600 to its run directory (the token in it is the key to the
// server, as the socket's mode is to the uplink).
type RunInfo struct {
	// Pid is the daemon's: a reader checks it is the daemon that runs.
	Pid     int    `json:"pid"`
	BaseURL string `json:"url"`
	Token   string `json:"token"`
}

// TokenURL is the URL to open: BaseURL with the token.
func (i RunInfo) TokenURL() string {
	return i.BaseURL + "?" + url.Values{tokenParam: {i.Token}}.Encode()
}

// Info is the server's RunInfo for a daemon of pid.
func (s *Server) Info(pid int) RunInfo {
	return RunInfo{Pid: pid, BaseURL: s.BaseURL(), Token: s.token}
}
