#!/bin/sh
# Property: every word of the fixture is found by cached_lookup.
. ./src/lib.sh
seed=$1 fixture=$2
while read -r w; do
	cached_lookup "$w" "$fixture" >/dev/null || { echo "seed $seed: lookup of $w failed"; exit 1; }
done < "$fixture"
