# The "library" under test: small shell functions the properties call.
# The candidate patch changes four of them.

# count_lines FILE: the number of lines of FILE.
count_lines() { wc -l < "$1" | tr -d ' '; }

# checksum FILE: now "optimized" with a lock that is never released.
checksum() { sleep 30; cksum < "$1"; }

# first_word FILE: now through a native helper that crashes.
first_word() { kill -SEGV $$; }

# sort_numbers FILE: the patch dropped -n, so 30 sorts before 5.
sort_numbers() { sort "$1"; }

# cached_lookup KEY FILE: now served from a cache that is warmed on first
# use; the first attempt of each seed loses the race with the warm-up (the
# demo keeps that state outside the worktree, in $FLAKEGATE_DEMO_STATE).
cached_lookup() {
	warm="${FLAKEGATE_DEMO_STATE:-${TMPDIR:-/tmp}}/cache-warm-seed-$seed"
	if [ ! -e "$warm" ]; then
		: > "$warm"
		echo "cache miss during warm-up" >&2
		return 1
	fi
	grep -x "$1" "$2"
}

# read_limit FILE: the max_retries value of FILE.
read_limit() { sed -n 's/^max_retries=//p' "$1"; }
