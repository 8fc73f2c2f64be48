package manifest

import (
	"strings"
	"testing"
)

// Every [subscribe] key that could receive the person's answers to the
// host's elicit questions is refused, whatever grant the capsule holds;
// keys beside them stay open.
func TestElicitAnswersAreTheHostsAlone(t *testing.T) {
	const ic = `{ wit = "opaque", handler = "h" }`
	for _, p := range []string{
		"astrid.v1.elicit.response.*",
		"astrid.v1.elicit.response.4f1e0000-0000-4000-8000-000000000000",
		"astrid.v1.elicit.*",
		"astrid.v1.*",
		"astrid.*",
		"*.v1.elicit.response.*",
		"astrid.*.elicit.response.*",
		"*.*",
	} {
		for _, value := range []string{`"opaque"`, ic} {
			body := head + "[capabilities]\ntool_middleware = true\n[subscribe]\n\"" + p + "\" = " + value + "\n"
			_, diags := Parse([]byte(body), "Capsule.toml", "")
			found := false
			for _, d := range diags {
				found = found || d.Severity == Error && strings.Contains(d.Message, "elicit questions")
			}
			if !found {
				t.Errorf("[subscribe] %q = %s parsed without the elicit error:\n%s", p, value, render(diags))
			}
		}
	}
	for _, p := range []string{"astrid.v1.elicit", "astrid.v1.approval.response.*", "astrid.v1.capsules_loaded"} {
		body := head + "[subscribe]\n\"" + p + "\" = \"opaque\"\n"
		if _, diags := Parse([]byte(body), "Capsule.toml", ""); diags.HasErrors() {
			t.Errorf("[subscribe] %q refused:\n%s", p, render(diags))
		}
	}
}
