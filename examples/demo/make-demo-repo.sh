#!/bin/sh
# make-demo-repo.sh DIR: create the demo git repository in DIR/repo and
# its shared cache folder DIR/cache (the config's sandbox.rw).
#
#   tag base               examples/demo/base/ as one commit
#   tag candidate          base + examples/demo/candidate/ (the patch under review)
#   tag candidate-config   base + a patch that edits flakegate.yaml itself
set -eu
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
dir=$(cd "$1" && pwd)
case $dir in *[\\\"\|\&]*) echo "$0: $dir: a folder without \\, \", | or & please" >&2; exit 2 ;; esac
repo=$dir/repo
rm -rf "$repo" "$dir/cache"
mkdir -p "$repo" "$dir/cache"
cp -R "$here/base/." "$repo/"
cd "$repo"
sed "s|\"/demo/cache\"|\"$dir/cache\"|" flakegate.yaml > flakegate.yaml.new
mv flakegate.yaml.new flakegate.yaml
export GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@example.com
export GIT_COMMITTER_NAME=demo GIT_COMMITTER_EMAIL=demo@example.com
git init -q -b main
git add -A
git commit -q -m "base: the demo service and its properties"
git tag base

cp -R "$here/candidate/." .
git add -A
git commit -q -m "candidate: cache lookups, faster checksums, new limits"
git tag candidate

git checkout -q --detach base
sed 's/^retry_cap: 2 /retry_cap: 9 /' flakegate.yaml > flakegate.yaml.new
mv flakegate.yaml.new flakegate.yaml
git commit -q -am "candidate-config: raise the retry cap"
git tag candidate-config

git checkout -q main
echo "$repo"
