package uplinkwire

// The queries a client may ask (OpQuery's Query): the daemon answers each
// with an OK whose Payload is the view the connection's principal may see
// (docs/uplink.md, "Queries").
const (
	// QueryCapsules is the capsule list `astrid capsule list` prints: a
	// JSON array of the runtime's capsule statuses, in load order.
	QueryCapsules = "capsules"
	// QueryStatus is the live status `astrid status` prints: the
	// status.json object, plus the socket's clients and bytes.
	QueryStatus = "status"
)

// Queries lists every query this version answers.
var Queries = []string{QueryCapsules, QueryStatus}
