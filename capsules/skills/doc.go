// Package skills is the built-in skill library capsule,
// astrid-capsule-skills (issue 34.4; docs/skills.md).
//
// A skill is a SKILL.md (the Agent Skills layout: YAML-style frontmatter
// with name and description, then instructions). Skills come from the
// capsules' [[skill]] entries, which their static engines serve on
// static.v1.request.skills ($ASTRID_HOME/skills/*/SKILL.md is served the
// same way, by the runtime's astrid-skills capsule), and, when [env]
// workspace_skills is true, from the workspace's .astrid/skills/*/SKILL.md,
// read through the host (so a symlink out of the workspace is refused).
//
// On prompt_builder.v1.hook.before_build it answers with the index — one
// line per skill, its name and description — as appendSystemContext for
// skills of capsules holding allow_prompt_injection, and as
// prependContext (user-visible context) for the others and the
// workspace's. The tool read_skill {name} returns a skill's whole text.
//
// It owns offering skills: it never runs what a skill says, never writes
// a file, starts no goroutines and keeps nothing between calls.
package skills
