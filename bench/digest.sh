#!/usr/bin/env bash
# bench/digest.sh: `flakegate digest DIR` against `openssl dgst -sha256` over
# the same ~1 GB of bytes, side by side in one run.
#
# The folder (4000 files of 256 KiB in 40 folders plus 4 files of 16 MiB,
# 1.04 GiB of random bytes) is built once under bench/out/ (gitignored) and
# reused. Both sides are warmed alike (page cache), then timed alternately,
# ROUNDS rounds each (default 5), swapping which goes first every round.
# The peer hashes the same bytes as one stream:
#   find DIR -type f -print0 | sort -z | xargs -0 cat | openssl dgst -sha256
#
# Prints each round, the median wall and CPU times, the median ratio (openssl time /
# flakegate time; >1 means flakegate is faster) and flakegate's max RSS.
# Target: ratio >= 1.5 and RSS < 64 MiB. With STRICT=1 a missed target
# exits 1.
#
# Environment: FLAKEGATE (a built binary; default: go build ./cmd/flakegate),
# ROUNDS, STRICT.
set -euo pipefail

cd "$(dirname "$0")/.."
out=bench/out
tree=$out/digest-tree
rounds=${ROUNDS:-5}
mkdir -p "$out"

fg=${FLAKEGATE:-}
if [ -z "$fg" ]; then
	go build -o "$out/flakegate" ./cmd/flakegate
	fg=$out/flakegate
fi
command -v openssl >/dev/null || { echo "digest.sh: openssl not found" >&2; exit 2; }

if [ ! -e "$out/digest-tree.complete" ]; then
	echo "building $tree (once) ..." >&2
	rm -rf "$tree"
	for d in $(seq -w 0 39); do
		mkdir -p "$tree/d$d"
		# 100 files of 256 KiB per folder, from one stream.
		head -c $((100 * 262144)) /dev/urandom | split -b 262144 -a 3 -d - "$tree/d$d/f"
	done
	mkdir -p "$tree/big"
	for i in 0 1 2 3; do
		head -c $((16 << 20)) /dev/urandom >"$tree/big/b$i"
	done
	touch "$out/digest-tree.complete"
fi
files=$(find "$tree" -type f | wc -l)
bytes=$(find "$tree" -type f -printf '%s\n' | awk '{s += $1} END {print s}')

TIMEFORMAT='%R %U %S'

peer() {
	find "$tree" -type f -print0 | LC_ALL=C sort -z | xargs -0 cat | openssl dgst -sha256 >"$out/peer.txt"
}

# peer_files is a second, informative peer: openssl reading each file
# itself (no pipe), one process for all files.
peer_files() {
	find "$tree" -type f -print0 | xargs -0 openssl dgst -sha256 >/dev/null
}

# flakegate runs the digest and leaves its max RSS (KiB) in digest.rss.
flakegate() {
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f %M -o "$out/digest.rss" "$fg" digest "$tree" >"$out/digest.txt"
		return
	fi
	# No GNU time: sample the peak (VmHWM) from /proc while it runs.
	"$fg" digest "$tree" >"$out/digest.txt" &
	local pid=$! hwm=0 v
	while v=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null) && [ -n "$v" ]; do
		hwm=$v
		sleep 0.005
	done
	wait "$pid"
	echo "$hwm" >"$out/digest.rss"
}

# measure prints "<wall s> <cpu s>" (user + sys, children included) of one
# call of the function $1.
measure() {
	local t
	t=$({ time "$1"; } 2>&1 >/dev/null)
	awk -v t="$t" 'BEGIN {split(t, a, " "); printf "%s %.3f\n", a[1], a[2] + a[3]}'
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "tree: $files files, $bytes bytes; $(nproc) CPUs; $rounds rounds" >&2
# Warm the page cache and all programs alike.
find "$tree" -type f -print0 | xargs -0 cat >/dev/null
flakegate
peer
peer_files
want=$(cat "$out/digest.txt")

fg_w=() fg_c=() p_w=() p_c=() pf_w=() ratios=() fratios=() rss_max=0
printf '%-5s %22s %22s %14s %8s %8s %8s\n' round "flakegate s (cpu s)" "openssl s (cpu s)" "openssl/file s" ratio ratio/f "RSS MiB"
for r in $(seq 1 "$rounds"); do
	if [ $((r % 2)) -eq 1 ]; then
		read -r fw fc < <(measure flakegate)
		read -r pw pc < <(measure peer)
		read -r qw _ < <(measure peer_files)
	else
		read -r qw _ < <(measure peer_files)
		read -r pw pc < <(measure peer)
		read -r fw fc < <(measure flakegate)
	fi
	if [ "$(cat "$out/digest.txt")" != "$want" ]; then
		echo "digest.sh: flakegate printed a different digest in round $r" >&2
		exit 3
	fi
	rss=$(tail -n 1 "$out/digest.rss")
	ratio=$(awk -v p="$pw" -v f="$fw" 'BEGIN {printf "%.3f", p / f}')
	fratio=$(awk -v p="$qw" -v f="$fw" 'BEGIN {printf "%.3f", p / f}')
	fg_w+=("$fw") fg_c+=("$fc") p_w+=("$pw") p_c+=("$pc") pf_w+=("$qw") ratios+=("$ratio") fratios+=("$fratio")
	[ "$rss" -gt "$rss_max" ] && rss_max=$rss
	printf '%-5s %22s %22s %14s %8s %8s %8s\n' "$r" "$fw ($fc)" "$pw ($pc)" "$qw" "$ratio" "$fratio" \
		"$(awk -v m="$rss" 'BEGIN {printf "%.1f", m / 1024}')"
done

med() { printf '%s\n' "$@" | median; }
awk -v fw="$(med "${fg_w[@]}")" -v fc="$(med "${fg_c[@]}")" -v pw="$(med "${p_w[@]}")" -v pc="$(med "${p_c[@]}")" \
	-v qw="$(med "${pf_w[@]}")" -v q="$(med "${ratios[@]}")" -v qf="$(med "${fratios[@]}")" \
	-v b="$bytes" -v m="$rss_max" 'BEGIN {
	printf "median wall: flakegate %.3f s (%.0f MB/s, cpu %.3f s), openssl stream %.3f s (%.0f MB/s, cpu %.3f s), openssl per file %.3f s\n", fw, b / fw / 1e6, fc, pw, b / pw / 1e6, pc, qw
	printf "median ratio openssl stream / flakegate: %.2fx   target >= 1.5x\n", q
	printf "median ratio openssl per file / flakegate: %.2fx   (informative)\n", qf
	printf "flakegate max RSS: %.1f MiB   target < 64 MiB\n", m / 1024
}'
ratio_med=$(med "${ratios[@]}")
if awk -v q="$ratio_med" -v m="$rss_max" 'BEGIN {exit !(q >= 1.5 && m < 65536)}'; then
	echo "target met"
else
	echo "TARGET MISSED"
	[ "${STRICT:-0}" = 1 ] && exit 1
fi
exit 0
