package gate

// FSDirs lists the directories fs_read and fs_write resolve to for
// principal, in declaration order: what an OS sandbox lets a process
// started for this capsule read, and also write (internal/sandbox). The
// exclusions the gate applies per request (Astrid's home) are the
// sandbox's to apply again: these are the grants as written, resolved.
func (g *Gate) FSDirs(principal string) (read, write []string) {
	for _, gr := range g.fsRead {
		read = append(read, gr.dir(g.env, principal))
	}
	for _, gr := range g.fsWrite {
		write = append(write, gr.dir(g.env, principal))
	}
	return read, write
}

// HasNetwork reports whether the capsule holds any outbound network grant
// (net or net_connect): without one, a process it starts gets no network.
func (g *Gate) HasNetwork() bool { return len(g.net) > 0 || len(g.netConnect) > 0 }
