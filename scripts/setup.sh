#!/usr/bin/env bash
# scripts/setup.sh PROFILE: install what `make PROFILE` needs on a fresh
# Debian or Ubuntu machine, when it is missing. `make demo` and `make test`
# run it first, and .ci/run too, so the README's two commands and CI
# install from this one list.
#
#   demo   git, make and bubblewrap: the demo's check runs every attempt in bwrap
#   test   the demo's, and what the sandbox, PostgreSQL, browser, framework,
#          report and action tests need (without them those tests skip, or
#          fail with CI=true), and the real jest and vitest of the batch
#          tests: npm ci of testdata/jsbatch (its package-lock.json pins
#          every version) into a cache folder named by the lockfile's
#          digest, $XDG_CACHE_HOME/flakegate/jsbatch-DIGEST (default
#          ~/.cache), once; check/batchjs_e2e_test.go finds it there
#
# As root it runs apt-get (only when something is missing); as anyone else
# it prints the one `sudo apt-get install` line and stops (exit 1).
# NO_SETUP=1 skips it (make test NO_SETUP=1): the tests that need a missing
# tool then skip. Go (1.26 or newer) is not an apt package here: Debian's
# is older, so a missing go is reported, never installed.
set -euo pipefail

# Each package and how to tell it is installed (a shell test). Python is
# probed at /usr/bin: the sandbox hides $HOME, so a pyenv or a pip --user
# install does not count.
declare -A probe=(
	[git]='command -v git'
	[make]='command -v make'
	[bubblewrap]='command -v bwrap'
	[openssl]='command -v openssl'
	[time]='test -x /usr/bin/time'
	[postgresql]='ls /usr/lib/postgresql/*/bin/initdb || command -v initdb'
	[chromium]='test -x /usr/bin/chromium || command -v chromium'
	[python3]='test -x /usr/bin/python3'
	[python3-pytest]='/usr/bin/python3 -c "import pytest"'
	[python3-hypothesis]='/usr/bin/python3 -c "import hypothesis"'
	[libxml2-utils]='command -v xmllint'
	[jq]='command -v jq'
	[nodejs]='command -v node'
	[npm]='command -v npm'
)

profile=${1:-}
case $profile in
demo) packages=(git make bubblewrap) ;;
test) packages=(git make openssl time bubblewrap postgresql chromium python3 python3-pytest python3-hypothesis libxml2-utils jq nodejs npm) ;;
*)
	echo "usage: scripts/setup.sh demo|test" >&2
	exit 2
	;;
esac

if [ "${NO_SETUP:-}" = 1 ]; then
	echo "setup: skipped (NO_SETUP=1)"
	exit 0
fi

# jsbatch installs the batch tests' jest and vitest (test profile), once
# per lockfile: into a folder of its own, renamed into place when npm ci
# is done, so that a half install is never found.
jsbatch() {
	[ "$profile" = test ] || return 0
	local src lock sum cache dest tmp
	src=$(cd "$(dirname "$0")/.." && pwd)/testdata/jsbatch
	lock=$src/package-lock.json
	sum=$(sha256sum "$lock" | cut -c1-16)
	cache=${XDG_CACHE_HOME:-$HOME/.cache}/flakegate
	dest=$cache/jsbatch-$sum
	[ -d "$dest/node_modules" ] && return 0
	mkdir -p "$cache"
	tmp=$(mktemp -d "$cache/.jsbatch-XXXXXX")
	cp "$src/package.json" "$lock" "$tmp/"
	echo "setup: npm ci of testdata/jsbatch into $dest"
	(cd "$tmp" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null)
	chmod -R a+rX "$tmp"
	mv -T "$tmp" "$dest" 2>/dev/null || rm -rf "$tmp" # another setup was first
}

missing() {
	local p
	for p in "${packages[@]}"; do
		if ! (eval "${probe[$p]}") >/dev/null 2>&1; then
			echo "$p"
		fi
	done
}

need=($(missing))
nogo=
if ! command -v go >/dev/null 2>&1; then
	nogo="setup: go was not found: install Go 1.26 or newer (Debian's golang package is older) and put it on PATH"
fi

if [ ${#need[@]} -eq 0 ]; then
	[ -z "$nogo" ] || { echo "$nogo" >&2; exit 1; }
	jsbatch
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	{
		echo "setup: 'make $profile' needs packages this machine lacks: ${need[*]}"
		echo "Install them (as root) with:"
		echo
		echo "    sudo apt-get install -y ${need[*]}"
		echo
		echo "then run 'make $profile' again. As root, 'make $profile' installs them itself."
		if [ "$profile" = test ]; then
			echo "To run the tests without them (those tests skip): make test NO_SETUP=1"
		fi
		[ -z "$nogo" ] || echo "$nogo"
	} >&2
	exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "setup: missing ${need[*]}, and this machine has no apt-get: install them with its package manager" >&2
	exit 1
fi
echo "setup: installing ${need[*]} (apt-get, as root)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
still=($(missing))
if [ ${#still[@]} -ne 0 ]; then
	echo "setup: still missing after apt-get install: ${still[*]}" >&2
	exit 1
fi
[ -z "$nogo" ] || { echo "$nogo" >&2; exit 1; }
jsbatch
echo "setup: done"
