package gate

// HostProcess checks a command against host_process, verbatim and before any
// path resolution: `npx` grants neither `npx-evil`, `/tmp/npx`, `./npx`,
// `NPX` nor `npx ` (upstream also let `npx <anything>` through; arguments are
// not part of the command here, so that form has no use and is refused).
func (g *Gate) HostProcess(command string) error {
	if command == "" {
		return deny("host_process", command, "is an empty command")
	}
	for _, declared := range g.caps.HostProcess {
		if command == declared {
			return nil
		}
	}
	return deny("host_process", command, "is not declared in host_process ("+list(g.caps.HostProcess)+"); commands compare verbatim")
}

// Persistent checks a child process meant to outlive the capsule instance:
// it needs host_process for the command and, on top, allow_persistent.
func (g *Gate) Persistent(command string) error {
	if err := g.HostProcess(command); err != nil {
		return err
	}
	if !g.caps.AllowPersistent {
		return deny("allow_persistent", command, "may run only as an ephemeral process: allow_persistent is false")
	}
	return nil
}
