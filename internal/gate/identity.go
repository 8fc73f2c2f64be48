package gate

// Identity levels, each implying the ones below it (seed 003).
const (
	levelNone = iota
	levelResolve
	levelLink
	levelAdmin
)

var identityLevels = map[string]int{"resolve": levelResolve, "link": levelLink, "admin": levelAdmin}

func (g *Gate) parseIdentity(written []string) {
	for _, w := range written {
		level, ok := identityLevels[w]
		if !ok {
			g.markInert("identity", w, "is not resolve, link or admin")
			continue
		}
		g.identity = max(g.identity, level)
	}
}

// Identity checks an identity operation's required level, "resolve", "link"
// or "admin" (lower case, as upstream). admin implies link, link implies
// resolve; an empty identity list denies every level.
func (g *Gate) Identity(level string) error {
	need, ok := identityLevels[level]
	if !ok {
		return deny("identity", level, "is not an identity level (resolve, link, admin)")
	}
	if need > g.identity {
		return deny("identity", level, "is not granted by identity ("+list(g.caps.Identity)+")")
	}
	return nil
}
