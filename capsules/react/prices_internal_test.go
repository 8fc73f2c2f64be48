package react

import (
	"testing"

	"github.com/astrid-go/astrid/capsules/anthropic"
	"github.com/astrid-go/astrid/capsules/openai"
)

// The built-in table parses whole (a typo would silently drop a model's
// cost) and prices the models the providers use by default and the
// Anthropic models they list.
func TestBuiltinPricesCoverTheDefaultModels(t *testing.T) {
	if len(defaultPriceProblems) != 0 {
		t.Fatalf("prices.txt: %v", defaultPriceProblems)
	}
	want := []string{"openai:" + openai.DefaultModel, "anthropic:" + anthropic.DefaultModel, "openai:gpt-4o", "openai:gpt-4o-mini", "openai:gpt-4.1"}
	for _, m := range anthropic.KnownModels {
		want = append(want, "anthropic:"+m)
	}
	for _, id := range want {
		p, ok := defaultPrices[id]
		if !ok || p.input <= 0 || p.output <= p.input || p.cached > p.input {
			t.Errorf("%s: %+v (known %v)", id, p, ok)
		}
	}
}

// [env] prices overrides the built-in entry of a model it names, adds
// models, and leaves the rest; an entry that does not parse leaves the
// built-in price standing.
func TestPricesOverrideTheBuiltinTable(t *testing.T) {
	table, problems := priceTable("openai:gpt-4o=1/2, ollama:llama3.2=0.1/0.2/0.05; anthropic:claude-sonnet-5-5=oops")
	if len(problems) != 1 {
		t.Fatalf("problems %v, want the one bad entry", problems)
	}
	for id, want := range map[string]price{
		"openai:gpt-4o":               {input: 1, output: 2, cached: 1},
		"ollama:llama3.2":             {input: 0.1, output: 0.2, cached: 0.05},
		"openai:gpt-4o-mini":          defaultPrices["openai:gpt-4o-mini"],
		"anthropic:claude-sonnet-5-5": defaultPrices["anthropic:claude-sonnet-5-5"],
	} {
		if table[id] != want {
			t.Errorf("%s: %+v, want %+v", id, table[id], want)
		}
	}
	if _, ok := table["openai:my-local-model"]; ok {
		t.Fatal("an unknown model has a price")
	}
	if defaultPrices["openai:gpt-4o"].input != 2.5 {
		t.Fatal("an override changed the built-in table itself")
	}
}
