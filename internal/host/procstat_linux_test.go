//go:build linux

package host

import (
	"os"
	"strconv"
	"strings"
)

// procStat is what the tests read of one process: they check a child's
// escape from its session and group, which internal/host/proc's tracker
// must catch.
type procStat struct {
	ppid, pgid, sid int
}

// readStat parses /proc/<pid>/stat (proc(5)); the command name may hold
// spaces and parentheses, so fields are read after its last ')'.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 4 {
		return procStat{}, false
	}
	var st procStat
	st.ppid, _ = strconv.Atoi(f[1])
	st.pgid, _ = strconv.Atoi(f[2])
	st.sid, _ = strconv.Atoi(f[3])
	return st, true
}
