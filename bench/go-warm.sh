#!/usr/bin/env bash
# bench/go-warm.sh: issue 24's warm aim, as root and without root, side by
# side with the bare peer in one run: "a second check of a harmless Go
# candidate at most 1.3x the same go test runs bare with a warm cache".
#
# examples/go-rapid, 8 seeds, retry_cap 2. Per mode (root; NONROOT_UID,
# default 61539, through setpriv): a first check fills the repository's Go
# build cache from the base (timed, not compared); then ROUNDS rounds
# (default 3), each a check of a NEW harmless candidate commit and the
# same 8 `go test -count=1 -run ^TestScheduleProperties$ ...` run bare in
# the same checkout, as the same user, in a Go build cache warmed by one
# untimed bare run. The two modes alternate within each round, and so do
# check and bare. Medians; ratio = check / bare. Aim: <= 1.3x.
#
# The non-root user gets a module cache of its own, filled from root's
# (GOPROXY=file://, no network), so its checks find the module the base's
# go.sum names as root's do.
set -euo pipefail

cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
uid=${NONROOT_UID:-61539}
[ "$(id -u)" = 0 ] || { echo "go-warm.sh: run as root (it runs the non-root side as uid $uid through setpriv)"; exit 2; }
command -v setpriv >/dev/null || { echo "go-warm.sh: setpriv (util-linux) is needed"; exit 2; }
work=$(mktemp -d /tmp/flakegate-bench-gowarm.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" # its own folder: flakegate hides the folder of its binary from the attempts
fg=${FLAKEGATE:-$work/bin/flakegate}
[ -n "${FLAKEGATE:-}" ] || go build -o "$fg" ./cmd/flakegate
chmod 755 "$(dirname "$fg")" "$fg"

echo "# bench/go-warm.sh $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "# uptime: $(uptime)"
echo "# nproc: $(nproc)"
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "# kernel: $(uname -r); $(bwrap --version); $(go version); root and uid $uid"
echo "# flakegate: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' + uncommitted changes')"

gitc() { git -c user.name=b -c user.email=b@example.com "$@"; }
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
seeds="1400 1401 1402 1403 1404 1405 1406 1407"
gobin=$(dirname "$(command -v go)")

# as MODE CMD...: runs CMD as root, or as the non-root user with its own
# HOME, module cache and (bare) build cache.
as() {
	local mode=$1
	shift
	if [ "$mode" = root ]; then
		"$@"
	else
		setpriv --reuid="$uid" --regid="$uid" --clear-groups env -i PATH="$gobin:/usr/bin:/bin" HOME="$work/home" \
			GOMODCACHE="$work/gomod" GOCACHE="$work/home/gocache" GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local "$@"
	fi
}
goinit() { # $1: folder
	mkdir -p "$1" && cp -r examples/go-rapid/. "$1/"
	(cd "$1" && sed -i 's/^random_seeds: 1.*/random_seeds: 0/; s/seeds: \[1400, 1401, 1402\]/seeds: [1400, 1401, 1402, 1403, 1404, 1405, 1406, 1407]/' flakegate.yaml &&
		git init -q -b main && gitc add -A && gitc commit -qm base && git tag base)
}
candidate() { # $1: mode, $2: repo, $3: tag
	(cd "$2" && as "$1" git checkout -q --detach base && echo "$3" >> README.md && as "$1" git -c user.name=b -c user.email=b@example.com commit -qam "$3" && as "$1" git tag "$3")
}
bare() { # $1: mode, $2: checkout
	(cd "$2" && for s in $seeds; do
		as "$1" go test -count=1 -run '^TestScheduleProperties$' . -rapid.seed=$s -rapid.checks=200 -rapid.nofailfile -fixture=testdata/limits.json >/dev/null
	done)
}
check() { # $1: mode, $2: repo, $3: candidate
	(cd "$2" && as "$1" "$fg" check --json --base base --candidate "$3" >"$work/last.json" 2>"$work/last.err") || {
		code=$?
		[ $code -le 1 ] || { cat "$work/last.err"; exit 3; }
	}
	grep -q '"verdict": "pass"' "$work/last.json" || { echo "$1: the check of $3 did not pass"; cat "$work/last.err"; exit 3; }
}

# The non-root user's home and module cache (rapid, from root's cache).
mkdir -p "$work/home" "$work/gomod"
rootmod=$(go env GOMODCACHE)
(cd examples/go-rapid && GOMODCACHE=$work/gomod GOPROXY=file://$rootmod/cache/download GOFLAGS=-mod=mod go mod download)
chown -R "$uid:$uid" "$work/home" "$work/gomod"

for mode in root nonroot; do
	repo=$work/repo-$mode
	goinit "$repo"
	[ $mode = root ] || chown -R "$uid:$uid" "$repo"
	candidate $mode "$repo" c0
	t0=$(now); check $mode "$repo" c0; t1=$(now)
	echo "$mode: first check (fills the repository's Go build cache) $(echo "$t1 - $t0" | bc) s: $(grep -o 'Go build cache filled[^(]*' "$work/last.err" | head -1); $(grep -o 'Go caches: [^;(]*' "$work/last.err" | head -1)"
	bare $mode "$repo" >/dev/null # warms the bare side's build cache
done

declare -A cks bares
for r in $(seq "$rounds"); do
	order="root nonroot"
	[ $((r % 2)) = 1 ] || order="nonroot root"
	for mode in $order; do
		repo=$work/repo-$mode
		candidate $mode "$repo" "c$r"
		if [ $((r % 2)) = 1 ]; then
			t0=$(now); check $mode "$repo" "c$r"; t1=$(now)
			t2=$(now); bare $mode "$repo"; t3=$(now)
		else
			t2=$(now); bare $mode "$repo"; t3=$(now)
			t0=$(now); check $mode "$repo" "c$r"; t1=$(now)
		fi
		c=$(echo "$t1 - $t0" | bc) b=$(echo "$t3 - $t2" | bc)
		cks[$mode]+="$c " bares[$mode]+="$b "
		echo "round $r $mode: second check $c s, bare 8 runs $b s ($(echo "scale=2; $c / $b" | bc)x); load $(cut -d' ' -f1-3 /proc/loadavg)"
	done
done
for mode in root nonroot; do
	c=$(printf '%s\n' ${cks[$mode]} | median) b=$(printf '%s\n' ${bares[$mode]} | median)
	echo "medians $mode: second check $c s vs bare $b s: $(echo "scale=2; $c / $b" | bc)x (aim <= 1.3x)"
done
echo "# uptime at the end: $(uptime)"
