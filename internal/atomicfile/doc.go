// Package atomicfile owns writing a file so that a concurrent reader sees
// its old content or its new, never a part, and never the new content
// under the old file's mode. It must not decide where files live or what
// mode they get: callers pass both.
package atomicfile
