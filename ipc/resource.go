package ipc

// The resource convention (docs/mcp.md): readable documents a
// capsule offers, which `astrid mcp serve` serves as MCP resources. A
// describe fan-out lists them: {} on ResourceRequestDescribeTopic, each
// capsule answering a ResourceDescribeResponse on
// ResourceDescribeResponseTopic(its id). A read is a request (DESIGN §4b)
// to the owning capsule on ResourceReadTopic(its id), answered on
// ResourceReadResultTopic; a capsule says one of its resources changed by
// a ResourceUpdated on ResourceUpdatedTopic(its id). All travel as
// untagged JSON.

// MaxConventionAnswer bounds one answer of the resource, prompt and
// completion conventions, encoded (the bus's default message limit): a
// read, a get or a describe answer larger is refused by who receives it.
const MaxConventionAnswer = 1 << 20

const (
	// ResourceRequestDescribeTopic asks every resource capsule to describe
	// its resources and resource templates (payload {}).
	ResourceRequestDescribeTopic = "resource.v1.request.describe"
	// ResourceReadResultTopic carries the answers to reads (replies).
	ResourceReadResultTopic = "resource.v1.read.result"
)

// ResourceDescribeResponseTopic is where capsule answers a resource describe.
func ResourceDescribeResponseTopic(capsule string) string {
	return "resource.v1.response.describe." + capsule
}

// ResourceReadTopic is where capsule is asked to read one of its resources.
func ResourceReadTopic(capsule string) string { return "resource.v1.read." + capsule }

// ResourceUpdatedTopic is where capsule says one of its resources changed.
func ResourceUpdatedTopic(capsule string) string { return "resource.v1.updated." + capsule }

// ResourceDescriptor is one resource as its capsule describes it.
type ResourceDescriptor struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mime_type,omitempty"`
	// Size is the resource's size in bytes, when known.
	Size int64 `json:"size,omitempty"`
}

// ResourceTemplateDescriptor is a family of resources named by an RFC
// 6570 URI template (level 1: {var} only).
type ResourceTemplateDescriptor struct {
	URITemplate string `json:"uri_template"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mime_type,omitempty"`
	// Values are the values a variable may take, by variable name: the
	// completions offered for it (none listed: none offered, unless
	// Complete names it).
	Values map[string][]string `json:"values,omitempty"`
	// Complete names the variables the capsule completes itself (the
	// completion convention, ipc/completion.go).
	Complete []string `json:"complete,omitempty"`
}

// ResourceDescribeResponse is one capsule's answer to a resource describe.
type ResourceDescribeResponse struct {
	Resources []ResourceDescriptor         `json:"resources"`
	Templates []ResourceTemplateDescriptor `json:"templates,omitempty"`
}

// ResourceReadRequest asks for the contents of one resource. Its answer
// echoes RequestID: through the daemon's socket a reply carries no
// correlation id of its own.
type ResourceReadRequest struct {
	RequestID string `json:"request_id,omitempty"`
	URI       string `json:"uri"`
}

// ResourceContents is a resource's contents: Text, or Blob for bytes
// (base64 in JSON).
type ResourceContents struct {
	URI      string `json:"uri"`
	MimeType string `json:"mime_type,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     []byte `json:"blob,omitempty"`
}

// ResourceReadResult answers a read: the contents, or NotFound or Error
// saying why there are none.
type ResourceReadResult struct {
	// RequestID is the request's, echoed.
	RequestID string             `json:"request_id,omitempty"`
	Contents  []ResourceContents `json:"contents,omitempty"`
	// NotFound says the capsule has no resource of that URI.
	NotFound bool   `json:"not_found,omitempty"`
	Error    string `json:"error,omitempty"`
}

// ResourceUpdated says the resource URI changed.
type ResourceUpdated struct {
	URI string `json:"uri"`
}
