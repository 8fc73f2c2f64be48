// Package capsulefile owns reading the files of an installed capsule: its
// manifest, its wasm component, meta.json and its static files. Everything
// read from a capsule directory goes through Read, so that what an operator
// (or an attacker who got a file into $ASTRID_HOME/capsules) left there
// cannot hang the kernel, exhaust its memory or lead it out of the
// directory: only regular files are read, through an os.Root on the capsule
// directory (no symlink leads out), opened without blocking (a FIFO never
// waits for a writer), and their size is checked before a byte is read.
//
// It must not parse what it reads, and must not know which files a capsule
// has (the manifest says that).
package capsulefile
