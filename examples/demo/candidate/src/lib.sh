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

# cached_lookup KEY FILE: now served from a cache on disk, in the folder
# $DEMO_CACHE that outlives the test process (the config shares it with every
# attempt: sandbox.rw). A lookup while a seed's cache is still cold starts the
# warm-up and misses; once warm, lookups are served. So the first run of a
# seed fails and every later run passes: a flake that depends on what ran
# before, which only a retry inside the cap can tell from a regression.
cached_lookup() {
	warm="$DEMO_CACHE/seed-$seed.warm"
	if [ ! -e "$warm" ]; then
		: > "$warm"
		echo "cache miss during warm-up" >&2
		return 1
	fi
	grep -x "$1" "$2"
}

# read_limit FILE: the max_retries value of FILE.
read_limit() { sed -n 's/^max_retries=//p' "$1"; }
