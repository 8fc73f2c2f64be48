// Package shell is the built-in shell capsule (astrid-capsule-shell): one
// tool, run_shell_command (spec/capsules-cli.md §5.3), that runs
// `bash -c <command>` through the host's ProcessRun in a working directory
// under the workspace, with a timeout, and returns what it printed.
//
// Before it runs anything it (1) refuses a command the catastrophic deny
// list matches (deny.go, on the program mvdan.cc/sh/v3/syntax parses from
// it: rm, truncate, cp, mv, dd or a redirection onto /, a protected
// top-level directory, the home directory or one level below them, mkfs,
// shutdown, dd onto a device, chmod -R of a protected path, a fork bomb,
// through sudo/env/xargs/find -exec/sh -c/eval, $( ), backticks, parameter
// expansions with modifiers, quoting and braces; a word it cannot resolve
// where it matters, and a line that does not parse, are refused), which
// no answer overrides; then
// (2) asks the person through the host approval call, with the exact
// command as the resource, so an "always" answer covers that command only.
// Its manifest declares asks_approval, so the approval capsule does not
// ask again for the tool as a whole.
//
// It owns the tool's argument checks, the deny list, the approval action
// and how a run's outcome reads to the model (output cut visibly to what a
// tool result can carry, a non-zero exit, a timeout or a cancel said as
// such). It must not decide what a program may do: which program may run,
// where, with which environment, for how long and with how much output is
// the host's (host_process, the fs grants, the environment rules, the
// output caps, the process tracker's SIGINT-then-SIGKILL, and the OS
// confinement of every process it starts), and the deny list is a
// seatbelt, never a permission.
package shell
