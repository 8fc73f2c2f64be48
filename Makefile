# The two commands a newcomer needs: `make run` and `make test`.
.PHONY: run test build bench fuzz deadcode

run:
	./scripts/run.sh

test:
	./scripts/test.sh

build:
	./scripts/build.sh bin/astrid

fuzz:
	./scripts/fuzz.sh

bench:
	./scripts/bench.sh

deadcode:
	./scripts/deadcode.sh
