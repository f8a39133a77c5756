#!/bin/sh
# Generates fixtures/limits.txt (the fixture's generator is watched too).
echo "max_retries=3" > fixtures/limits.txt
