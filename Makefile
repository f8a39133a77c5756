# flakegate: build, demo, test.
GO       ?= go
BIN      ?= bin/flakegate
DEMO_DIR ?= $(CURDIR)/out/demo
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: build demo test bench

# demo and test first install what they need when it is missing
# (scripts/setup.sh: apt-get as root, else the one apt-get line and a stop;
# NO_SETUP=1 skips it).

build:
	$(GO) build -ldflags "-X github.com/flakegate/flakegate.Version=$(VERSION)" -o $(BIN) ./cmd/flakegate

# demo builds flakegate, creates a small git repository from examples/demo
# (a base commit and a candidate patch) and runs `flakegate check` on it
# with the embedded store: every label, the records and the exit code.
demo:
	NO_SETUP='$(NO_SETUP)' scripts/setup.sh demo
	$(MAKE) --no-print-directory build
	examples/demo/run-demo.sh $(BIN) $(DEMO_DIR)

test:
	NO_SETUP='$(NO_SETUP)' scripts/setup.sh test
	scripts/test.sh

# bench runs every benchmark whose figure bench/README.md quotes and writes
# bench/results/DATE.txt; ONLY="classify digest" runs a subset.
bench:
	ONLY="$(ONLY)" bench/all.sh
