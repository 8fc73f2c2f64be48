// Package skillmd reads a SKILL.md (the Agent Skills layout): its
// frontmatter, name and description between "---" lines, and the bound on
// its size. It is a leaf helper shared by the skills capsule and the
// runtime's skill library ($ASTRID_HOME/skills).
//
// It owns parsing that text; it must not read files, log or know where
// skills come from.
package skillmd
