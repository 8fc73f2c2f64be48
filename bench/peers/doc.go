// Command peers measures one agent turn, exec to exit, of astrid and of
// every peer agent CLI that is installed (codex, claude, opencode, crush,
// goose), against one fake model server it runs on loopback: the model
// asks for the agent's file-reading tool on README.md, then answers "It
// holds a README.". The agents take turns, round by round (interleaved),
// so that the machine's load falls on all of them alike; it reports, per
// agent, min/median/p90 wall time, median CPU (user + system) and median
// peak RSS, and how many runs failed (no answer). An agent not on PATH is
// skipped and said so. astrid runs in-process (--no-daemon) and through a
// daemon (astrid start) it starts in a throwaway home.
//
// It must not reach anything but loopback: every agent is pointed at the
// fake server by its own configuration, written into throwaway homes.
// bench/peers.sh builds astrid and runs it (--install puts the npm peers
// into a throwaway directory first; never in CI).
//
//	bench/peers.sh -rounds 15
package main
