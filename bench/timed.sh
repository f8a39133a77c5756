# bench/timed.sh: sourced by bench/batch.sh, bench/impact.sh and
# bench/impact-real.sh, never run. It defines timed CMD..., which runs CMD
# and writes "WALL CPU" (seconds) to $work/t.last.
#
# CPU time is read from a cpuacct cgroup (v1) the command runs in: a
# check's sandboxed attempts are no children flakegate waits for, so
# getrusage (GNU time's user + system) leaves out nearly all of a go
# check's CPU (measured: 5.3 s of 68 s; perf stat -e task-clock and the
# cgroup agreed within 4%). The attempts' own memory and pids cgroups do
# not move them out of the cpuacct hierarchy. Without a writable cpuacct
# hierarchy, CPU is GNU time's and the header says so.
#
# The sourcing script sets $work and bench_name first, after its header;
# the cgroup is removed on exit, with $work unless KEEP is set.

cg=/sys/fs/cgroup/cpuacct/flakegate-bench-$bench_name-$$
if mkdir "$cg" 2>/dev/null; then
	trap '[ -n "${KEEP:-}" ] || { chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"; }; rmdir "$cg" 2>/dev/null || true' EXIT
	echo "# cpu time: cpuacct.usage of a cgroup every measured command runs in"
else
	cg=
	echo "# cpu time: GNU time user+system (no writable cpuacct cgroup: sandboxed attempts are left out)"
fi

timed() {
	local u0=0 u1=0
	[ -z "$cg" ] || u0=$(cat "$cg/cpuacct.usage")
	/usr/bin/time -f "%e %U %S" -o "$work/t.raw" sh -c '[ -z "$1" ] || echo $$ >"$1/tasks"; shift; exec "$@"' sh "$cg" "$@"
	if [ -n "$cg" ]; then
		u1=$(cat "$cg/cpuacct.usage")
		tail -1 "$work/t.raw" | awk -v ns=$((u1 - u0)) '{printf "%s %.2f\n", $1, ns / 1e9}' >"$work/t.last"
	else
		tail -1 "$work/t.raw" | awk '{printf "%s %.2f\n", $1, $2 + $3}' >"$work/t.last"
	fi
}
