#!/bin/sh
# Property: the retry limit read from the fixture is at most 5.
. ./src/lib.sh
seed=$1 fixture=$2
[ "$(read_limit "$fixture")" -le 5 ]
