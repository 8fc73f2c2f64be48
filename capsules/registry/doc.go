// Package registry is the built-in provider registry, capsule
// astrid-capsule-registry (spec/capsules-cli.md §6.5; docs/agent.md says
// how a turn's provider and model are chosen).
//
// Discovery: the registry publishes llm.v1.request.describe and reads
// llm.v1.response.describe until every capsule intercepting the describe
// topic has answered, or describeWindow has passed (sdk.Gather). Each
// entry of an answer becomes one ipc.ModelEntry named
// "<provider>:<model>", where provider is the last segment of the entry's
// request_topic (llm.v1.request.generate.<provider>) and model its id. An
// entry is accepted only when the capsule that answered (the source id
// the kernel stamped) intercepts that request topic, so one capsule cannot
// advertise another's provider and have requests sent where it listens
// (anti-shadowing). A provider reports "ready": false with a "why" when it
// cannot serve yet (no api key); a missing "ready" counts as ready.
//
// The list is cached in volatile KV while the same capsules answer
// describe, for at most cacheMaxAge, and dropped on
// astrid.v1.capsules_loaded from the kernel; a discovery that a capsule
// did not answer in time is served for partialCacheMaxAge only.
//
// The active model is a canonical id in durable KV, per principal (the
// host namespaces KV per principal; the key holds no principal). When none
// is set, or the one set is no longer offered, the default answers: the
// first ready model of anthropic, then of openai, else replay's, else the
// first ready model of any provider.
//
// Protocol (requests carry correlation_id; every answer is an
// ipc.RegistryReply on registry.v1.response.<op>.<correlation_id>):
// get_providers (rediscovers), get_active_model, set_active_model
// {model_id} (an unknown id is an error naming the known ones), and
// unset_active_model. A change is announced on
// registry.v1.active_model_changed (the entry, or null when unset).
//
// It owns the list of models and each principal's choice only: it never
// asks a model anything, and it does not route requests (react sends them
// to the chosen provider's topic). It starts no goroutines and holds
// nothing outside KV.
package registry
