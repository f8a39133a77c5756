#!/usr/bin/env bash
# The test command of the README: format, vet, and every test with the race
# detector. PostgreSQL and Chromium tests start their own throwaway server and
# browser; with CI=true they fail instead of skipping when those are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:" >&2
	echo "$unformatted" >&2
	exit 1
fi
go vet ./...
go test -race -count=1 -timeout 75m "$@" ./...
# A coverage build re-executes itself as the sandbox helper: the helper's
# counters are kept and nothing of the runtime's reaches an attempt's output
# (go test -cover ./... works); so does a test that fakes git with its own binary.
# A few seconds: two packages, four tests.
go test -cover -count=1 -run 'TestHelperCoverage|TestOverlayAttempt|TestPrepareLayerKept|TestGitError' ./attempt/sandbox/ ./git/
