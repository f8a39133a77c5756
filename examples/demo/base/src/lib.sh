# The "library" under test: small shell functions the properties call.

# count_lines FILE: the number of lines of FILE.
count_lines() { wc -l < "$1" | tr -d ' '; }

# checksum FILE: a checksum of FILE.
checksum() { cksum < "$1"; }

# first_word FILE: the first line of FILE.
first_word() { head -n 1 "$1"; }

# sort_numbers FILE: FILE's numbers in ascending order, one per line.
sort_numbers() { sort -n "$1"; }

# cached_lookup KEY FILE: the line of FILE that equals KEY.
cached_lookup() { grep -x "$1" "$2"; }

# read_limit FILE: the max_retries value of FILE.
read_limit() { sed -n 's/^max_retries=//p' "$1"; }
