#!/bin/sh
# Property: the first word of the fixture is "apple".
. ./src/lib.sh
seed=$1 fixture=$2
[ "$(first_word "$fixture")" = apple ]
