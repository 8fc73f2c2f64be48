package manifest

import (
	"fmt"
	"slices"
	"strings"
)

// reservedCLIVerbs are the `astrid capsule` subcommands a capsule's CLI
// command may not shadow (upstream's list).
var reservedCLIVerbs = []string{"new", "install", "update", "list", "remove", "tree", "deps", "build", "check", "config", "show", "run", "help"}

func (c *checker) readCommands(top *table, m *Manifest) {
	names := map[string]int{}
	for _, t := range top.tables("command") {
		var cmd Command
		var nv *value
		cmd.Name, nv = t.required("name")
		cmd.Description, _ = t.str("description")
		if f, fv := t.str("file"); fv != nil {
			cmd.File = f
			if c.checkRelativeFile(t, "file", f, fv) {
				c.fileRefs = append(c.fileRefs, fileRef{what: "command file", file: f, at: fv, key: t.keyPath("file")})
			}
		}
		kind, kv := t.str("kind")
		switch kind {
		case "", CommandSlash:
			cmd.Kind = CommandSlash
		case CommandCLI:
			cmd.Kind = CommandCLI
			if nv != nil {
				if err := validateCLIName(cmd.Name); err != nil {
					c.errorf(nv.at, t.keyPath("name"), "%v", err)
				}
			}
		default:
			c.errorf(kv.at, t.keyPath("kind"), "command %q: unknown kind %q: use \"slash\" (the default) or \"cli\"", cmd.Name, kind)
		}
		if nv != nil {
			if line, dup := names[cmd.Kind+":"+cmd.Name]; dup {
				c.errorf(nv.at, t.keyPath("name"), "command %q is declared twice (first at line %d)", cmd.Name, line)
			}
			names[cmd.Kind+":"+cmd.Name] = nv.at.line
		}
		t.rest(nil)
		m.Commands = append(m.Commands, cmd)
	}
}

func validateCLIName(n string) error {
	reason := ""
	switch {
	case n == "":
		reason = "must not be empty"
	case len(n) > 32:
		reason = "must be at most 32 characters"
	case n[0] < 'a' || n[0] > 'z':
		reason = "must start with a lowercase ASCII letter (a-z)"
	case slices.Contains(reservedCLIVerbs, n):
		reason = fmt.Sprintf("%q is a reserved built-in `astrid capsule` subcommand", n)
	default:
		for _, r := range n {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				reason = fmt.Sprintf("contains invalid character %q (allowed: a-z, 0-9, '-')", r)
				break
			}
		}
	}
	if reason == "" {
		return nil
	}
	return fmt.Errorf("invalid CLI command name %q: %s", n, reason)
}

func (c *checker) readMCPServers(top *table, m *Manifest) {
	ids := map[string]bool{}
	for _, t := range top.tables("mcp_server") {
		var s MCPServer
		var iv *value
		s.ID, iv = t.required("id")
		if iv != nil {
			if !validToolName(s.ID) || strings.Contains(s.ID, ":") {
				c.errorf(iv.at, t.keyPath("id"), "mcp_server id %q must be ASCII letters, digits, '-' or '_' (its tools appear as \"<id>:<tool>\")", s.ID)
			} else if ids[s.ID] {
				c.errorf(iv.at, t.keyPath("id"), "mcp_server id %q is declared twice", s.ID)
			}
			ids[s.ID] = true
		}
		var tv, cv *value
		s.Type, tv = t.str("type")
		s.Command, cv = t.str("command")
		s.Args, _ = t.strs("args")
		s.Description, _ = t.str("description")
		if s.Remote() {
			c.readRemoteMCP(t, m, &s, cv)
		}
		t.rest(nil)
		switch {
		case s.Remote():
		case s.Type == "stdio" && cv == nil:
			c.errorf(t.v.at, t.path, "mcp_server %q is stdio but has no command; add command = \"…\"", s.ID)
		case s.Type == "stdio":
			if !slices.Contains(m.Capabilities.HostProcess, s.Command) {
				c.errorf(cv.at, t.keyPath("command"), "mcp_server %q runs %q, which capabilities.host_process does not grant; add it there", s.ID, s.Command)
			}
		case tv == nil:
			c.warnf(t.v.at, t.path, "mcp_server %q has no type, so it starts nothing; set type = \"stdio\" to run it, or \"http\" with a url to connect to it", s.ID)
		default:
			c.warnf(tv.at, t.keyPath("type"), "mcp_server %q has type %q, which starts nothing here; \"stdio\" runs a server, \"http\" (or the legacy \"sse\") connects to one", s.ID, s.Type)
		}
		m.MCPServers = append(m.MCPServers, s)
	}
}

// validToolName is the bus's tool-name rule: 1 to 64 ASCII letters, digits,
// '-', '_' or ':'.
func validToolName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == ':') {
			return false
		}
	}
	return true
}

func (c *checker) readSkills(top *table, m *Manifest) {
	for _, t := range top.tables("skill") {
		var s Skill
		s.Name, _ = t.required("name")
		s.Description, _ = t.str("description")
		var fv *value
		if s.File, fv = t.required("file"); fv != nil && c.checkRelativeFile(t, "file", s.File, fv) {
			c.fileRefs = append(c.fileRefs, fileRef{what: "skill file", file: s.File, at: fv, key: t.keyPath("file")})
		}
		t.rest(nil)
		m.Skills = append(m.Skills, s)
	}
}

var uplinkProfiles = []string{"chat", "interactive", "notify", "bridge"}

func (c *checker) readUplinks(top *table, m *Manifest) {
	for _, t := range top.tables("uplink") {
		var u Uplink
		u.Name, _ = t.required("name")
		u.Platform, _ = t.required("platform")
		var pv *value
		if u.Profile, pv = t.required("profile"); pv != nil && !slices.Contains(uplinkProfiles, u.Profile) {
			c.errorf(pv.at, t.keyPath("profile"), "uplink %q: unknown profile %q: use \"chat\", \"interactive\", \"notify\" or \"bridge\"", u.Name, u.Profile)
		}
		t.rest(nil)
		m.Uplinks = append(m.Uplinks, u)
	}
}

func (c *checker) readContextFiles(top *table, m *Manifest) {
	for _, t := range top.tables("context_file") {
		var f ContextFile
		f.Name, _ = t.required("name")
		var fv *value
		if f.File, fv = t.required("file"); fv != nil && c.checkRelativeFile(t, "file", f.File, fv) {
			c.fileRefs = append(c.fileRefs, fileRef{what: "context file", file: f.File, at: fv, key: t.keyPath("file")})
		}
		t.rest(nil)
		m.ContextFiles = append(m.ContextFiles, f)
	}
}

func (c *checker) readTools(top *table, m *Manifest) {
	names := map[string]int{}
	for _, t := range top.tables("tool") {
		var tool Tool
		var nv *value
		if tool.Name, nv = t.required("name"); nv != nil {
			if !validToolName(tool.Name) || strings.Contains(tool.Name, ":") {
				c.errorf(nv.at, t.keyPath("name"), "tool name %q must be 1 to 64 ASCII letters, digits, '-' or '_'", tool.Name)
			} else if line, dup := names[tool.Name]; dup {
				c.errorf(nv.at, t.keyPath("name"), "tool %q is declared twice (first at line %d)", tool.Name, line)
			}
			names[tool.Name] = nv.at.line
		}
		tool.DescriptionForLLM, _ = t.required("description_for_llm")
		tool.InputSchemaWIT, _ = t.str("input_schema_wit")
		tool.Mutable, _ = t.boolean("mutable")
		var av *value
		if tool.AsksApproval, av = t.boolean("asks_approval"); tool.AsksApproval && !tool.Mutable {
			// A tool that asks before it runs changes things; saying
			// so keeps every reader that only knows mutable (a
			// frontend, the model's tool list) on the safe side.
			c.errorf(av.at, t.keyPath("asks_approval"), "tool %q sets asks_approval without mutable = true: a tool that asks the person before it runs changes things", tool.Name)
		}
		t.rest(nil)
		m.Tools = append(m.Tools, tool)
	}
}
