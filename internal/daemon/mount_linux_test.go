package daemon

import "golang.org/x/sys/unix"

func mount(source, target, fstype string, flags uintptr, data string) error {
	return unix.Mount(source, target, fstype, flags, data)
}

func unmount(target string) error { return unix.Unmount(target, 0) }

func remountReadOnly(target string) error {
	return unix.Mount("", target, "", unix.MS_REMOUNT|unix.MS_RDONLY, "")
}
