#!/usr/bin/env bash
# The steps of the flakegate GitHub Action (action.yml at the repository
# root), one per subcommand, so that each can be run and tested outside
# GitHub:
#
#   run.sh setup     install bubblewrap when bwrap is missing (apt-get, as
#                    root or through sudo), and lift Ubuntu 24.04's AppArmor
#                    restriction of unprivileged user namespaces
#   run.sh install   go install flakegate at INPUT_VERSION, else at the
#                    action's own ref (ACTION_REF); from the action's own
#                    folder when neither names one (a local `uses: ./`)
#   run.sh check     flakegate doctor (in a collapsed group), then
#                    flakegate check --github --junit FILE --json, both as
#                    root where the runner allows it (passwordless sudo, as
#                    on hosted runners: the strongest sandbox); sets the
#                    outputs verdict, junit and summary; fails on exit 1, 2, 3
#
# Inputs come as environment variables (action.yml maps each input to its
# INPUT_* variable with env:, never inline in a script): INPUT_BASE,
# INPUT_ARGS, INPUT_FREEZE_OWNER, INPUT_LEDGER (a DSN: never printed),
# INPUT_VERSION, INPUT_SUDO (auto or never). GitHub's own: GITHUB_ACTION_PATH, GITHUB_WORKSPACE,
# GITHUB_EVENT_PATH, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_PATH,
# RUNNER_TEMP.
set -euo pipefail

module=github.com/flakegate/flakegate
action_dir=${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/.." && pwd)}
state=${RUNNER_TEMP:-${TMPDIR:-/tmp}}/flakegate-action
bindir=$state/bin

# as_root runs a command as root: directly, or through sudo.
as_root() {
	if [ "$(id -u)" = 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo -n "$@"
	else
		return 1
	fi
}

# strongest sets as (the words that run flakegate as root where the runner
# allows it) and mode (what the log says about it). As root every attempt
# runs as nobody, on an overlay with idmapped mounts and cgroup limits; as
# the job's user it runs on an overlay in the sandbox helper's own user
# namespace, with rlimits only. sudo keeps the job's environment (-E:
# PATH with the toolchains, FLAKEGATE_LEDGER, the GITHUB_* files) and
# sets SUDO_UID, by which git trusts the job user's checkout.
strongest() {
	as=()
	if [ "$(id -u)" = 0 ]; then
		mode="as root (the job's user)"
	elif [ "${INPUT_SUDO:-auto}" = never ]; then
		mode="as uid $(id -u), the job's user (the sudo input is never)"
	elif ! command -v sudo >/dev/null 2>&1; then
		mode="as uid $(id -u), the job's user (no sudo on this runner)"
	elif ! sudo -n true 2>/dev/null; then
		mode="as uid $(id -u), the job's user (sudo asks for a password here)"
	else
		as=(sudo -n -E -- env "PATH=$PATH")
		mode="as root through sudo (passwordless sudo: the strongest sandbox)"
	fi
}

# give_back hands what flakegate wrote as root through sudo back to the
# job's user, so that later steps (and a self-hosted runner's cleanup)
# may read and remove it.
give_back() {
	[ ${#as[@]} -gt 0 ] || return 0
	local p owned=()
	for p in "$@"; do
		[ -e "$p" ] && owned+=("$p")
	done
	[ ${#owned[@]} -gt 0 ] || return 0
	sudo -n chown -R "$(id -u):$(id -g)" "${owned[@]}" || echo "::warning title=flakegate::could not give ${owned[*]} back to the job's user"
}

output() { # name value
	if [ -n "${GITHUB_OUTPUT:-}" ]; then
		printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
	fi
}

summary() { # lines of Markdown
	if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
		printf '%s\n' "$@" >>"$GITHUB_STEP_SUMMARY"
	fi
}

setup() {
	if bwrap=$(command -v bwrap); then
		echo "bubblewrap: $bwrap ($(bwrap --version 2>&1 | head -n 1))"
	else
		echo "bubblewrap: not installed; installing it with apt-get"
		if ! { as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
			as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends bubblewrap; }; then
			echo "::error title=flakegate::bubblewrap is missing and could not be installed (not root, no sudo). Install it on the runner: sudo apt-get install -y bubblewrap"
			exit 1
		fi
	fi
	# Ubuntu 24.04 (ubuntu-latest) lets AppArmor refuse unprivileged user
	# namespaces, which every bwrap sandbox needs; a CI runner is thrown
	# away after the job, so the action lifts the restriction there.
	# (PROC_SYS replaces /proc/sys in the tests.)
	local restrict=${PROC_SYS:-/proc/sys}/kernel/apparmor_restrict_unprivileged_userns
	if [ "$(cat "$restrict" 2>/dev/null)" = 1 ]; then
		if as_root sysctl -q -w kernel.apparmor_restrict_unprivileged_userns=0; then
			echo "AppArmor: unprivileged user namespaces allowed for this job (kernel.apparmor_restrict_unprivileged_userns=0)"
		else
			echo "::warning title=flakegate::AppArmor restricts unprivileged user namespaces and the action could not lift it; flakegate doctor says what the sandbox can do"
		fi
	fi
}

install() {
	local ref=${INPUT_VERSION:-${ACTION_REF:-}}
	mkdir -p "$bindir"
	if [ -n "$ref" ]; then
		echo "go install $module/cmd/flakegate@$ref"
		GOBIN=$bindir go install "$module/cmd/flakegate@$ref"
	else
		# A local action (uses: ./ or a path): build the code beside it.
		local version
		version=$(git -C "$action_dir" describe --tags --always --dirty 2>/dev/null || echo dev)
		echo "go install ./cmd/flakegate (from $action_dir, $version)"
		(cd "$action_dir" && GOBIN=$bindir go install -ldflags "-X $module.Version=$version" ./cmd/flakegate)
	fi
	if [ -n "${GITHUB_PATH:-}" ]; then
		echo "$bindir" >>"$GITHUB_PATH"
	fi
	"$bindir/flakegate" version
}

# pr_base reads the pull request's (or merge group's) base commit from
# the event that started the workflow.
pr_base() {
	[ -n "${GITHUB_EVENT_PATH:-}" ] && [ -f "$GITHUB_EVENT_PATH" ] || return 0
	jq -r '.pull_request.base.sha // .merge_group.base_sha // empty' "$GITHUB_EVENT_PATH"
}

check() {
	local fg=$bindir/flakegate
	[ -x "$fg" ] || fg=flakegate
	cd "${GITHUB_WORKSPACE:-.}"
	local base=${INPUT_BASE:-}
	[ -n "$base" ] || base=$(pr_base)
	if [ -z "$base" ]; then
		echo "::error title=flakegate::no base revision: the event is not a pull request; set the action's base input (e.g. base: origin/main)"
		output verdict error
		summary "### flakegate: no verdict" "" "No base revision: the event is not a pull request. Set the action's \`base\` input."
		exit 2
	fi
	# The base commit must be here: a shallow checkout (fetch-depth 1) has
	# the candidate only.
	if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
		echo "fetching the base $base"
		git fetch --no-tags --quiet --depth=1 origin "$base" || true
	fi
	if [ -n "${INPUT_LEDGER:-}" ]; then
		export FLAKEGATE_LEDGER=$INPUT_LEDGER
	fi
	local out=$state/out
	mkdir -p "$out"
	local junit=$out/junit.xml json=$out/summary.json
	rm -f "$junit" "$json"
	local -a args=(--base "$base" --github --junit "$junit" --json)
	if [ -n "${INPUT_FREEZE_OWNER:-}" ]; then
		args+=(--freeze-owner "$INPUT_FREEZE_OWNER")
	fi
	local -a extra=()
	read -r -a extra <<<"${INPUT_ARGS:-}" || true

	local -a as=()
	local mode
	strongest
	echo "flakegate runs $mode"
	echo "::group::flakegate doctor"
	"${as[@]}" "$fg" doctor --base "$base" || true
	echo "::endgroup::"

	local rc=0
	echo "flakegate check ${args[*]} ${extra[*]}"
	"${as[@]}" "$fg" check "${args[@]}" "${extra[@]}" >"$json" || rc=$?
	local common
	common=$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null) || common=
	give_back "$out" ${common:+"$common/flakegate" "$common/worktrees"}
	local verdict
	verdict=error
	case $rc in
	0 | 1) verdict=$(jq -r '.verdict // "error"' "$json" 2>/dev/null) || verdict=error ;;
	esac
	output verdict "$verdict"
	if [ -s "$json" ]; then
		output summary "$json"
	fi
	if [ -s "$junit" ]; then
		output junit "$junit"
	fi
	case $rc in
	0) echo "flakegate: verdict $verdict" ;;
	1)
		echo "::error title=flakegate::verdict $verdict: a reject label (see the step summary)"
		exit 1
		;;
	2)
		summary "### flakegate: no verdict (exit 2)" "" "A usage or configuration error: the check did not run. The log says what to fix (\`Error:\` and \`Try:\` lines)."
		echo "::error title=flakegate::exit 2: a usage or configuration error; a broken config is not a pass"
		exit 2
		;;
	*)
		summary "### flakegate: no verdict (exit $rc)" "" "flakegate itself failed (disk, git, database). Never read as a pass; the log says why."
		echo "::error title=flakegate::exit $rc: flakegate itself failed; never read as a pass"
		exit "$rc"
		;;
	esac
}

case ${1:-} in
setup | install | check) "$1" ;;
*)
	echo "usage: $0 setup|install|check" >&2
	exit 2
	;;
esac
