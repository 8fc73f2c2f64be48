package capsuleoci

import (
	"fmt"
	"strings"
)

// Scheme prefixes a registry reference on the command line.
const Scheme = "oci://"

// Ref is a parsed oci:// reference: registry host, repository, and a tag
// or a digest (both when written name:tag@digest; the digest wins).
type Ref struct {
	Registry   string
	Repository string
	Tag        string
	Digest     string
}

// ParseRef reads "oci://host[:port]/path/name:tag" or ".../name@sha256:…"
// with the distribution spec's grammar (checked by hand: a package-level
// regexp would be compiled at every astrid start).
func ParseRef(s string) (Ref, error) {
	rest, ok := strings.CutPrefix(s, Scheme)
	if !ok {
		return Ref{}, fmt.Errorf("%q is not an oci:// reference (oci://host/namespace/name:tag)", s)
	}
	bad := func(why string) (Ref, error) {
		return Ref{}, fmt.Errorf("%q: %s (want oci://host/namespace/name:tag or @sha256:…)", s, why)
	}
	host, path, ok := strings.Cut(rest, "/")
	if host == "" {
		return bad("no registry host")
	}
	if !ok {
		return bad("no repository after the host")
	}
	if !validHost(host) {
		return bad(fmt.Sprintf("registry host %q is not a host[:port]", host))
	}
	var out Ref
	out.Registry = host
	if at := strings.IndexByte(path, '@'); at >= 0 {
		out.Digest = path[at+1:]
		path = path[:at]
		if !ValidDigest(out.Digest) {
			return bad(fmt.Sprintf("digest %q is not sha256:<64 hex digits>", out.Digest))
		}
	}
	if c := strings.LastIndexByte(path, ':'); c >= 0 {
		out.Tag = path[c+1:]
		path = path[:c]
		if !validTag(out.Tag) {
			return bad(fmt.Sprintf("tag %q is not [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}", out.Tag))
		}
	}
	if !validRepository(path) {
		return bad(fmt.Sprintf("repository %q is not lower-case path components of [a-z0-9] joined by . _ __ or -", path))
	}
	out.Repository = path
	if out.Tag == "" && out.Digest == "" {
		return Ref{}, fmt.Errorf("%q names no tag or digest (add :<tag> or @sha256:<digest>)", s)
	}
	return out, nil
}

// validHost accepts a DNS name or IP literal ([v6] too) and an optional
// port.
func validHost(h string) bool {
	if len(h) > 255 {
		return false
	}
	name, port := h, ""
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return false
		}
		for _, r := range h[1:end] {
			if !(isAlnum(byte(r)) || r == ':' || r == '.') {
				return false
			}
		}
		name, port = "", h[end+1:]
		if port != "" && port[0] != ':' {
			return false
		}
		port = strings.TrimPrefix(port, ":")
		if port == "" && strings.HasSuffix(h, ":") {
			return false
		}
	} else if c := strings.LastIndexByte(h, ':'); c >= 0 {
		name, port = h[:c], h[c+1:]
		if port == "" {
			return false
		}
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return false
		}
	}
	if strings.HasPrefix(h, "[") {
		return true
	}
	if name == "" {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if !isAlnum(label[i]) && label[i] != '-' {
				return false
			}
		}
	}
	return true
}

// validRepository: components [a-z0-9]+ joined within by ".", "_", "__"
// or "-"+, separated by "/".
func validRepository(p string) bool {
	if p == "" || len(p) > 255 {
		return false
	}
	for _, comp := range strings.Split(p, "/") {
		if comp == "" || !isLowerAlnum(comp[0]) || !isLowerAlnum(comp[len(comp)-1]) {
			return false
		}
		for i := 0; i < len(comp); i++ {
			switch c := comp[i]; {
			case isLowerAlnum(c):
			case c == '.':
				if !isLowerAlnum(comp[i+1]) {
					return false
				}
			case c == '_':
				if comp[i+1] == '_' {
					i++
				}
				if !isLowerAlnum(comp[i+1]) {
					return false
				}
			case c == '-':
				// one or more dashes
			default:
				return false
			}
		}
	}
	return true
}

func validTag(t string) bool {
	if t == "" || len(t) > 128 || t[0] == '.' || t[0] == '-' {
		return false
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; !isAlnum(c) && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// ValidDigest reports whether d is "sha256:" and 64 lower-case hex
// digits, the one algorithm this package checks.
func ValidDigest(d string) bool {
	hex, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(hex) != 64 {
		return false
	}
	for i := 0; i < len(hex); i++ {
		if c := hex[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
func isAlnum(c byte) bool      { return isLowerAlnum(c) || c >= 'A' && c <= 'Z' }

// reference is the tag or digest asked for.
func (r Ref) reference() string {
	if r.Digest != "" {
		return r.Digest
	}
	return r.Tag
}

// String writes the reference back in its oci:// form.
func (r Ref) String() string {
	s := Scheme + r.Registry + "/" + r.Repository
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}
