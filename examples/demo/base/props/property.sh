#!/bin/sh
# Property: sort_numbers returns its input in ascending order.
. ./src/lib.sh
seed=$1 fixture=$2
prev=
for n in $(sort_numbers "$fixture"); do
	if [ -n "$prev" ] && [ "$n" -lt "$prev" ]; then echo "seed $seed: $n after $prev"; exit 1; fi
	prev=$n
done
