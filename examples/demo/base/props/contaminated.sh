#!/bin/sh
# Property: the largest number sorts last.
. ./src/lib.sh
seed=$1 fixture=$2
[ "$(sort_numbers "$fixture" | tail -n 1)" -eq "$(sort -n "$fixture" | tail -n 1)" ]
