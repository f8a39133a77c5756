#!/bin/sh
# Property: the checksum of the fixture is computed (within the wall budget).
. ./src/lib.sh
seed=$1 fixture=$2
[ -n "$(checksum "$fixture")" ]
