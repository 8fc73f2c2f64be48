package sandbox

// DefaultSystemRead is what every confined process may read besides its
// grants: programs, their libraries and the dynamic loader's files, the
// toolchains' installation directories, certificates, time zones and
// locales, and the kernel's views of itself (/proc is safe to list: Landlock
// refuses the parts of another domain's processes that need ptrace
// access, and /proc/<pid>/root is checked where it leads). Chosen by
// running git, go, python3, node and npm confined (sandbox_toolchain_test).
// Not in it: /etc as a whole (passwd, shadow, ssh host keys), /home,
// /root, /tmp, /dev/shm, /var, /run.
var DefaultSystemRead = []string{
	"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/opt",
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/ld.so.preload",
	"/etc/alternatives", "/etc/localtime", "/etc/timezone", "/usr/share/zoneinfo",
	"/etc/ssl", "/etc/ca-certificates", "/etc/ca-certificates.conf", "/etc/pki",
	"/etc/nsswitch.conf", "/etc/host.conf", "/etc/hosts", "/etc/resolv.conf", "/etc/gai.conf",
	"/etc/services", "/etc/protocols", "/etc/mime.types", "/etc/magic", "/etc/terminfo",
	"/etc/inputrc", "/etc/gitconfig", "/etc/environment", "/etc/locale.alias", "/etc/default/locale",
	"/etc/python3", "/etc/python3.11", "/etc/perl", "/etc/java-17-openjdk",
	"/proc", "/sys/devices/system/cpu", "/sys/fs/cgroup",
}

// DefaultDevices are the device files every confined process may use.
var DefaultDevices = []string{
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty",
}
