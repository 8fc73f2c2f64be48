package gate

import (
	"path/filepath"
	"slices"
	"strings"
)

// $ASTRID_HOME is never inside a grant (DESIGN §4a). It holds the store's
// key, the operator's config, the state database, the daemon's socket and
// every installed capsule, so a capsule that could read it could read every
// secret, and one that could write it could grant itself anything. Whatever
// an fs grant says and wherever the workspace is (the default ~/.astrid lies
// inside a workspace of ~), a request that lands in the home is refused.
//
// Two grants name places inside the home on purpose, and only they reach
// there: home:// (the invoking principal's own home, $ASTRID_HOME/home/<p>)
// and cwd:// (the capsule's install directory). Their os.Root is opened on
// that directory itself, so nothing else in the home is reachable through
// them. The same directory reached through `*` or a literal grant is
// refused: the scheme is how a capsule asks for it.
//
// The gate refuses lexically, on the resolved request path; the host
// checks what it actually opened (Root.Fence, Root.CheckReached), since a
// symlink inside the workspace may lead into the home without leaving the
// workspace's os.Root.

// HomeReason is the phrase every home refusal carries.
const HomeReason = "lies in Astrid's home ($ASTRID_HOME), which no grant reaches"

// ProtectedDirs returns the directories no grant reaches, given $ASTRID_HOME:
// home made absolute and clean and, when it differs, the same directory with
// its symlinks resolved (a home given as ~/.astrid where ~ is a symlink, or
// as a symlink itself). Every path below one of them is protected too. An OS
// sandbox confining a capsule's processes must keep all of them unreachable,
// except a principal's home or a capsule's install directory that a home://
// or cwd:// grant names explicitly. home == "" gives nil.
//
// Unlike the rest of the package, it reads the file system: to make a
// relative home absolute (against the working directory) and to resolve
// symlinks. A home that does not exist yet is returned as written.
func ProtectedDirs(home string) []string {
	if home == "" {
		return nil
	}
	abs, err := filepath.Abs(home)
	if err != nil {
		abs = filepath.Clean(home)
	}
	abs = filepath.ToSlash(abs)
	dirs := []string{abs}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		if real = filepath.ToSlash(real); real != abs {
			dirs = append(dirs, real)
		}
	}
	return dirs
}

// fence is the set of protected directories a root's I/O must not reach.
type fence struct {
	dirs []string // absolute, clean; the home as written and as resolved
}

// holds reports which protected directory p (absolute, clean) lies in, if
// any. The comparison ignores ASCII case, so ".ASTRID/secrets.key" is caught
// on a case-insensitive file system (and merely refused on another).
func (f *fence) holds(p string) (string, bool) {
	if f == nil {
		return "", false
	}
	for _, d := range f.dirs {
		if withinFold(p, d) {
			return d, true
		}
	}
	return "", false
}

// withinFold is within by whole components, ignoring case.
func withinFold(p, dir string) bool {
	switch {
	case dir == "/":
		return strings.HasPrefix(p, "/")
	case len(p) < len(dir) || !strings.EqualFold(p[:len(dir)], dir):
		return false
	}
	return len(p) == len(dir) || p[len(dir)] == '/'
}

// homeDenial is the refusal of request, whose resolved path p lies in the
// protected directory dir (p is shown when it differs from the request).
// scheme, when not "", is the grant that would reach p: the principal's home
// and the install directory lie in the home, and only their schemes open
// them.
func homeDenial(capability, request, p, dir, scheme string) error {
	reason := HomeReason
	if dir != "" {
		reason = strings.Replace(reason, "($ASTRID_HOME)", "($ASTRID_HOME, "+display(dir)+")", 1)
	}
	if scheme != "" {
		reason = strings.Replace(reason, "no grant reaches", "only a "+scheme+" grant reaches", 1)
	}
	if p != "" && p != request {
		reason = "(" + display(p) + ") " + reason
	}
	return deny(capability, request, reason)
}

// Fence returns the directories the I/O under r must not reach, whatever a
// symlink or hard link in r leads to: $ASTRID_HOME as written and as
// resolved. It is nil for a home:// or cwd:// root (their os.Root is the
// granted directory inside the home itself) and when the gate knows no home.
func (r Root) Fence() []string {
	if r.fence == nil {
		return nil
	}
	return slices.Clone(r.fence.dirs)
}

// CheckReached returns a denial for capability and request when real, the
// path the host found the opened file or directory at with every symlink
// resolved (absolute, slash-separated), lies in r's fence; nil otherwise.
func (r Root) CheckReached(capability, request, real string) error {
	if d, in := r.fence.holds(filepath.ToSlash(filepath.Clean(real))); in {
		return homeDenial(capability, request, real, d, "")
	}
	return nil
}

// Protected returns the directories this gate keeps every fs request out of
// (ProtectedDirs of Env.Home), nil when Env.Home was not set.
func (g *Gate) Protected() []string {
	if g.home == nil {
		return nil
	}
	return slices.Clone(g.home.dirs)
}
