package openai

// FilterModels is filterModels, for the external tests.
var FilterModels = filterModels
