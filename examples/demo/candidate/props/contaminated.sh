#!/bin/sh
# Property: the smallest number sorts first.
# (The candidate "fixed" the flaky check by skipping it.)
exit 0
