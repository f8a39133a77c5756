# flakegate: build, demo, test.
GO       ?= go
BIN      ?= bin/flakegate
DEMO_DIR ?= $(CURDIR)/out/demo
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: build demo test bench

build:
	$(GO) build -ldflags "-X github.com/flakegate/flakegate.Version=$(VERSION)" -o $(BIN) ./cmd/flakegate

# demo builds flakegate, creates a small git repository from examples/demo
# (a base commit and a candidate patch) and runs `flakegate check` on it
# with the embedded store: every label, the records and the exit code.
demo: build
	examples/demo/run-demo.sh $(BIN) $(DEMO_DIR)

test:
	scripts/test.sh

# bench runs every benchmark whose figure bench/README.md quotes and writes
# bench/results/DATE.txt; ONLY="classify digest" runs a subset.
bench:
	ONLY="$(ONLY)" bench/all.sh
