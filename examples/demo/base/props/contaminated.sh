#!/bin/sh
# Property: the smallest number sorts first.
. ./src/lib.sh
seed=$1 fixture=$2
[ "$(sort_numbers "$fixture" | head -n 1)" -eq 1 ]
