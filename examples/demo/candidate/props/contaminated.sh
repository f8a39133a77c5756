#!/bin/sh
# Property: the largest number sorts last.
# (The candidate broke sort_numbers, then "fixed" this failing check by
# skipping it. flakegate runs the base's version of this file on the
# candidate's code: it fails there, and the edit is named.)
exit 0
