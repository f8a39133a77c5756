# bench/cobra.sh: sourced by bench/suite.sh and bench/check-cpu.sh, never
# run. The setup both share: a work folder (removed on exit), the binary
# ($FLAKEGATE, or built), the header of the raw output (date, uptime,
# nproc, CPU, versions, commit; $header_extra appended to the versions
# line), gitc and median, and $repo: github.com/spf13/cobra v1.10.2
# copied from the Go module cache (this repository's go.sum brings it),
# gated by one suites: entry for its root package (seeds [1, 2, 3];
# TestFailGen* expect a write to a read-only file to fail, which it does
# not as root: excluded), committed and tagged base.
#
# The sourcing script sets bench_name (its file name without .sh) and
# rounds first.

work=$(mktemp -d "/tmp/flakegate-bench-$bench_name.XXXXXX")
chmod 755 "$work"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/bin"
fg=${FLAKEGATE:-$work/bin/flakegate}
[ -n "${FLAKEGATE:-}" ] || go build -o "$fg" ./cmd/flakegate
src=$(go env GOMODCACHE)/github.com/spf13/cobra@v1.10.2

echo "# bench/$bench_name.sh $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "# uptime: $(uptime)"
echo "# nproc: $(nproc)"
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "# kernel: $(uname -r); $(bwrap --version); $(go version)${header_extra:-}; uid $(id -u)"
if [ -n "${FLAKEGATE:-}" ]; then
	echo "# flakegate: the binary $FLAKEGATE (FLAKEGATE; its name says its commit); rounds $rounds"
else
	echo "# flakegate: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' + uncommitted changes'); rounds $rounds"
fi
echo "# module: github.com/spf13/cobra v1.10.2 (root package), from $src"

gitc() { git -c user.name=b -c user.email=b@example.com "$@"; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

repo=$work/cobra
cp -r "$src" "$repo"
chmod -R u+w "$repo"
cat >"$repo/flakegate.yaml" <<'YAML'
version: 1
retry_cap: 2
workers: 1
suites:
  - path: "."
    framework: go
    seeds: [1, 2, 3]
    wall_budget: 10m
    exclude: ["TestFailGen*"]
YAML
(cd "$repo" && git init -q -b main && gitc add -A && gitc commit -qm base && git tag base)
