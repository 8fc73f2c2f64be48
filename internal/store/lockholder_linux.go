package store

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// lockHolderPID finds the flock on path in /proc/locks. A line reads
//
//	1: FLOCK  ADVISORY  WRITE 4711 08:01:1234567 0 EOF
//
// (major:minor in hex, inode in decimal). Matching on the inode alone is
// enough for a hint, and survives overlay filesystems, whose stat device
// differs from the one the lock reports.
func lockHolderPID(path string) (int, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	inode := strconv.FormatUint(st.Ino, 10)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" {
			continue
		}
		dev := strings.Split(fields[5], ":")
		if len(dev) != 3 || dev[2] != inode {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil || pid <= 0 {
			return 0, false
		}
		return pid, true
	}
	return 0, false
}

func processName(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
