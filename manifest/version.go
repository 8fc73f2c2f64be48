package manifest

// RuntimeVersion is this runtime's version, against which a manifest's
// `astrid-version` requirement is checked. Builds may override it with
// -ldflags "-X github.com/astrid-go/astrid/manifest.RuntimeVersion=…".
var RuntimeVersion = "0.1.0"
