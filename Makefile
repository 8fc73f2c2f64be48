# The two commands a newcomer needs: `make run` and `make test`.
.PHONY: run test build bench fuzz

run:
	./scripts/run.sh

test:
	./scripts/test.sh

build:
	go build -o bin/astrid ./cmd/astrid

bench:
	./scripts/bench.sh
