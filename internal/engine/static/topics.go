package static

// The static topics: a request is answered by every capsule that has
// something of that kind, each on its own response topic.
const (
	ContextRequestTopic  = "static.v1.request.context"
	SkillsRequestTopic   = "static.v1.request.skills"
	CommandsRequestTopic = "static.v1.request.commands"
)

// The handler names the engine's interceptors are bound to. They are
// prefixed so that no capsule's own handler is mistaken for them.
const (
	ContextHandler  = "astrid_static_context"
	SkillsHandler   = "astrid_static_skills"
	CommandsHandler = "astrid_static_commands"
)

// ContextResponseTopic is where capsule id answers a context request:
// static.v1.response.context.<id>.
func ContextResponseTopic(id string) string { return "static.v1.response.context." + id }

// SkillsResponseTopic is where capsule id answers a skills request:
// static.v1.response.skills.<id>.
func SkillsResponseTopic(id string) string { return "static.v1.response.skills." + id }

// CommandsResponseTopic is where capsule id answers a commands request:
// static.v1.response.commands.<id>.
func CommandsResponseTopic(id string) string { return "static.v1.response.commands." + id }
