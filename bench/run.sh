#!/usr/bin/env bash
# bench/run.sh: fencecheck's exhaustive BFS against Spin on the same bounded
# model (bench/fencing.pml = model.Machine with the reference design at the
# bound below). Builds and runs the Spin verifier (exact, COLLAPSE, HC4,
# BITSTATE), runs bench/cmd/fencebench (checker.BFS exact and hash-compact,
# and reduced when fencebench has -reduce, on 1 goroutine and on all cores:
# the list fc_runlist below), checks that both tools stored the same number
# of distinct states, and prints one table with the ratios fencecheck/Spin.
# The table also has Spin on bench/fencing_procs.pml, the same protocol
# written as one process per node (a different model: other states), with
# Spin's partial-order reduction and without. Then it checks that Spin finds
# the buggy variant's counterexample in both models (and fencecheck too).
#
# Usage: bench/run.sh [--bound small|faults|big] [-D NAME=VALUE]... [--timeout SECONDS]
#                     [--memlim MB] [--variant NAME] [--no-variant] [--no-procs]
#                     [--spin-only] [--keep] [--baseline REV] [--pairs N]
#   --bound small   (default) OPS=2 TTL=1 DROPS=1: 6.72M states, minutes in all
#   --bound faults  OPS=1 TTL=2 INFLIGHT=1 and every fault budget 1: 479,204 states
#   --bound big     OPS=2 TTL=1 DROPS=1 CRASHES=1: not measured since the four-step grant
#                   (25M states before it); several GB for Spin
#   -D NAME=VALUE   override one bound (W R TTL OPS GRANTS INFLIGHT DROPS DUPS CRASHES RESTARTS FORGERIES
#                   SINKRESTARTS SKEW; SKEW > 0 wants --no-procs: fencing_procs.pml has no clocks)
#   --timeout S     wall-clock limit of each single run (default 600)
#   --memlim MB     Spin's -DMEMLIM (default 6000)
#   --variant NAME  the design checked (default check-then-write): any that the Promela
#                   models have (an unknown NAME lists them); the safe ones (release-advances-fence,
#                   two-step-commit-check, holder-clock, sink-deadline) have no counterexample
#                   to find
#   --no-procs      leave out fencing_procs.pml (its state space is larger at most bounds)
#   --baseline REV  also build fencebench from git revision REV (git archive) and run
#                   each fencebench run with it, right after the same run of this tree,
#                   for ratios new/old measured side by side in one run
#   --pairs N       then N more rounds of Spin exact, fencecheck exact on 1 goroutine and on
#                   all cores, one after the other: each round's ratios to Spin, and their
#                   median, minimum and maximum (the targets are judged on the medians)
# Everything is built and run in a temporary directory, removed at exit.
set -euo pipefail

die() { echo "run.sh: $*" >&2; exit 2; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

bound=small timeout_s=600 memlim=6000 variant=1 spin_only=0 keep=0 procs=1 vname=check-then-write vneed= baseline= pairs=0
declare -A over=()
while [ $# -gt 0 ]; do
	case $1 in
	--bound) bound=${2:?}; shift 2 ;;
	-D) [[ ${2:-} == *=* ]] || die "-D wants NAME=VALUE"; over[${2%%=*}]=${2#*=}; shift 2 ;;
	-D*=*) a=${1#-D}; over[${a%%=*}]=${a#*=}; shift ;;
	--timeout) timeout_s=${2:?}; shift 2 ;;
	--memlim) memlim=${2:?}; shift 2 ;;
	--no-variant) variant=0; shift ;;
	--variant) vname=${2:?}; shift 2 ;;
	--no-procs) procs=0; shift ;;
	--spin-only) spin_only=1; shift ;;
	--keep) keep=1; shift ;;
	--baseline) baseline=${2:?}; shift 2 ;;
	--pairs) pairs=${2:?}; shift 2 ;;
	-h|--help) sed -n '2,/^[^#]/{/^#/p}' "$0"; exit 0 ;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
done

vprocs=1 # fencing_procs.pml has the design
case $vname in
check-then-write) vmacro=CHECK_THEN_WRITE ;;
grant-before-fence) vmacro=GRANT_BEFORE_FENCE ;;
ttl-only-lock) vmacro=TTL_ONLY_LOCK ;;
no-acquire-dedup) vmacro=NO_ACQUIRE_DEDUP ;;
renew-token-only) vmacro=RENEW_TOKEN_ONLY vneed=CRASHES=1 ;; # a restarted worker renews
global-fence) vmacro=GLOBAL_FENCE vneed=R=2 ;; # another resource's advance moves the fence
volatile-counter) vmacro=VOLATILE_COUNTER vneed=RESTARTS=1 ;; # a restart resets the counter
renew-at-deadline) vmacro=RENEW_AT_DEADLINE ;;
accept-higher-token) vmacro=ACCEPT_HIGHER_TOKEN vneed=FORGERIES=1 ;; # the stale holder forges a big token
dedup-before-fence) vmacro=DEDUP_BEFORE_FENCE vneed=OPS=3 ;; # a write, and again after the takeover
renew-from-old-deadline) vmacro=RENEW_FROM_OLD_DEADLINE vneed=OPS=3 ;; # an early renew, then a late one
release-advances-fence) vmacro=RELEASE_ADVANCES_FENCE ;;
two-step-commit-check) vmacro=TWO_STEP_COMMIT_CHECK ;;
scheduler-only-check) vmacro=SCHEDULER_ONLY_CHECK ;;
restart-no-grace) vmacro=RESTART_NO_GRACE vneed=RESTARTS=1 ;; # a restart forgets a lease in use
failover-ttl-reset) vmacro=FAILOVER_TTL_RESET vneed=RESTARTS=1 ;; # a restart renews every lease
etcd-revisions) vmacro=ETCD_REVISIONS ;;
holder-clock) vmacro=HOLDER_CLOCK ;;
holder-clock-no-fence) vmacro=HOLDER_CLOCK_NO_FENCE ;;
holder-margin) vmacro=HOLDER_MARGIN ;;
lock-delay-no-fence) vmacro=LOCK_DELAY_NO_FENCE ;;
sink-deadline) vmacro=SINK_DEADLINE ;;
producer-epochs) vmacro=PRODUCER_EPOCHS ;;
row-version-cas) vmacro=ROW_VERSION_CAS vneed=OPS=3 vprocs=0 ;; # a read, then a write with its version
volatile-sink-fence) vmacro=VOLATILE_SINK_FENCE vneed=SINKRESTARTS=1 ;; # a sink restart resets the fence
worker-clock) vmacro=WORKER_CLOCK vneed=SKEW=1 vprocs=0 ;; # a clock ahead reports a lease expired
request-id-key) vmacro=REQUEST_ID_KEY ;; # two attempts at one task store two results
*) die "unknown variant $vname: the Promela models have $(sed -n 's/^\([a-z-]*\)) vmacro=.*/\1/p' "$0" | tr '\n' ' ')" ;;
esac
command -v spin >/dev/null || die "spin not found: install it with  apt-get install spin  (Spin 6.x)"
command -v gcc >/dev/null || die "gcc not found: the Spin verifier is C (apt-get install gcc)"
command -v timeout >/dev/null || die "timeout (coreutils) not found"
[ -z "$baseline" ] || git -C "$repo" rev-parse --quiet --verify "$baseline^{commit}" >/dev/null ||
	die "--baseline $baseline: not a git revision of $repo"
[ $spin_only = 1 ] || command -v go >/dev/null || die "go not found (or use --spin-only)"
[[ $pairs =~ ^[0-9]+$ ]] || die "--pairs $pairs: not a number"
[ "$pairs" = 0 ] || [ $spin_only = 0 ] || die "--pairs needs fencecheck (not with --spin-only)"

# The bound: Promela macro = fencebench flag.
declare -A cfg=([W]=2 [R]=1 [TTL]=1 [OPS]=2 [GRANTS]=2 [INFLIGHT]=2 [DROPS]=1 [DUPS]=0 [CRASHES]=0
	[RESTARTS]=0 [FORGERIES]=0 [SINKRESTARTS]=0 [SKEW]=0)
hashw=24
case $bound in
small) ;;
faults) cfg+=([TTL]=2 [OPS]=1 [INFLIGHT]=1 [DUPS]=1 [CRASHES]=1 [RESTARTS]=1 [FORGERIES]=1); hashw=21 ;;
big) cfg+=([CRASHES]=1); hashw=25 ;;
*) die "unknown bound $bound (small, faults, big)" ;;
esac
for k in "${!over[@]}"; do
	[ -n "${cfg[$k]+x}" ] || die "unknown bound name $k"
	[[ ${over[$k]} =~ ^[0-9]+$ ]] || die "$k=${over[$k]}: not a number"
	[ "${over[$k]}" -gt "${cfg[$k]}" ] && hashw=25 # a guess: larger bounds want a larger hash table
	cfg[$k]=${over[$k]}
done
declare -A flagname=([W]=workers [R]=resources [TTL]=ttl [OPS]=ops [GRANTS]=grants [INFLIGHT]=inflight
	[DROPS]=drops [DUPS]=dups [CRASHES]=crashes [RESTARTS]=restarts [FORGERIES]=forgeries
	[SINKRESTARTS]=sink-restarts [SKEW]=skew)
order=(W R TTL OPS GRANTS INFLIGHT DROPS DUPS CRASHES RESTARTS FORGERIES SINKRESTARTS SKEW)
# bound_args: the Promela -D macros (defs), fencebench's flags (flags; no
# -sink-restarts 0 or -skew 0, which an older fencebench of --baseline
# lacks) and the bound shown (shown), from cfg
bound_args() {
	defs=() flags=() shown=()
	for k in "${order[@]}"; do
		defs+=("-D$k=${cfg[$k]}")
		{ [ "$k" = SINKRESTARTS ] || [ "$k" = SKEW ]; } && [ "${cfg[$k]}" = 0 ] || flags+=("-${flagname[$k]}" "${cfg[$k]}")
		shown+=("$k=${cfg[$k]}")
	done
}
bound_args
[ "${cfg[SKEW]}" = 0 ] || [ $procs = 0 ] || die "SKEW=${cfg[SKEW]}: fencing_procs.pml has no clock skew; add --no-procs"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fencebench.XXXXXX")
cleanup() { if [ $keep = 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi; }
trap cleanup EXIT
mkdir "$tmp/procs"
cp "$here/fencing.pml" "$here/designs.pml" "$tmp/"
cp "$here/fencing_procs.pml" "$here/designs.pml" "$tmp/procs/"
cores=$(nproc)
if [ $procs = 1 ] && { [ "${cfg[INFLIGHT]}" -gt 3 ] || [ "${cfg[INFLIGHT]}" -lt 1 ]; }; then
	echo "# fencing_procs.pml takes INFLIGHT 1..3: left out"
	procs=0
fi

echo "# fencecheck vs Spin, bound: ${shown[*]} (replicas=1, skew=0)"
echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $cores cores," \
	"$(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo); $(spin -V | head -1);" \
	"$(gcc --version | head -1); $( [ $spin_only = 1 ] || go version | cut -d' ' -f3)"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- Spin ----
# spin_build dir name extra-gcc-flags...: pan_name from dir/pan.c (-DSAFETY -DMEMLIM)
spin_build() {
	local dir=$1 name=$2; shift 2
	(cd "$dir" && gcc -O2 -DSAFETY -DMEMLIM="$memlim" "$@" -o "pan_$name" pan.c) ||
		die "gcc failed building pan_$name"
}
# pan_cut out rc: what cut short the pan run whose output is the file out and
# whose exit status (under timeout) is rc: time, depth, memory, or nothing.
pan_cut() {
	if [ "$2" = 124 ]; then
		echo time
	elif grep -q "max search depth too small" "$1"; then
		echo depth
	elif grep -q "out of memory\|reached -DMEMLIM bound" "$1"; then
		echo memory
	fi
}
# spin_run dir name soft pan-args... -> fields in $tmp/spin_name.kv. A search
# cut short (memory, depth, time) stops the script, unless soft=1: then the
# run is reported as incomplete (incomplete=memory|depth|time).
spin_run() {
	local dir=$1 name=$2 soft=$3; shift 3
	local out="$tmp/spin_$name.out" rc=0 cut
	(cd "$dir" && timeout "$timeout_s" "./pan_$name" "$@") >"$out" 2>&1 || rc=$?
	cut=$(pan_cut "$out" $rc)
	if [ -n "$cut" ] && [ "$soft" != 1 ]; then
		case $cut in
		time) die "pan_$name exceeded --timeout $timeout_s s (see a smaller --bound)" ;;
		depth) die "pan_$name: max search depth too small: raise -m" ;;
		memory) die "pan_$name ran out of memory (--memlim $memlim): $(grep -m1 'out of memory\|MEMLIM' "$out")" ;;
		esac
	fi
	awk -v name="$name" -v cut="$cut" '
		/^State-vector/ { vec = $2; err = $NF }
		/states, stored/ { stored = $1 }
		/transitions \(= stored\+matched\)/ { trans = $1 } # pan prints %g: 8 digits above 10^8
		/actual memory usage for states/ { smem = $1 }
		/memory used for hash (table|array)/ { hmem = $1 }
		/total actual memory usage/ { tmem = $1 }
		/^pan: elapsed time/ { secs = $4 }
		END {
			if (cut == "time") { printf "name=%s incomplete=time states=- transitions=- seconds=- rate=- mem_mb=- bps_store=- bps_total=- errors=0\n", name; exit }
			if (stored == "" || secs == "") { print "bad=1"; exit }
			if (smem == "") smem = 0
			if (secs == 0) secs = 0.01
			printf "name=%s states=%d transitions=%s seconds=%s rate=%.0f vec=%s errors=%s ", name, stored, trans, secs, stored/secs, vec, err
			printf "mem_mb=%.1f bps_store=%.1f bps_total=%.1f incomplete=%s\n", tmem, (smem+hmem)*1048576/stored, tmem*1048576/stored, (cut == "" ? "-" : cut)
		}' "$out" >"$tmp/spin_$name.kv"
	grep -q '^bad=1' "$tmp/spin_$name.kv" && { cat "$out" >&2; die "could not parse pan_$name output"; }
	[ "$(kv "$name" errors spin)" = 0 ] || { grep '^pan:' "$out" >&2; die "pan_$name found an error in the reference model"; }
}
kv() { # name field [spin|fc]
	sed -n "s/.* $2=\([^ ]*\).*/\1/p; s/^$2=\([^ ]*\).*/\1/p" "$tmp/${3:-spin}_$1.kv" | head -1
}

echo "# spin -a ${defs[*]} fencing.pml"
(cd "$tmp" && spin -a "${defs[@]}" fencing.pml >/dev/null) || die "spin -a failed"
echo "# gcc -O2 -DSAFETY -DNOREDUCE -DMEMLIM=$memlim [-DCOLLAPSE | -DHC4 | -DBITSTATE] pan.c; pan -m200000 -w$hashw (BITSTATE -w30)"
spin_build "$tmp" exact -DNOREDUCE
spin_build "$tmp" collapse -DNOREDUCE -DCOLLAPSE
spin_build "$tmp" hc4 -DNOREDUCE -DHC4
spin_build "$tmp" bitstate -DNOREDUCE -DBITSTATE
spin_run "$tmp" exact 0 -m200000 -w$hashw
spin_run "$tmp" collapse 0 -m200000 -w$hashw
spin_run "$tmp" hc4 0 -m200000 -w$hashw
spin_run "$tmp" bitstate 0 -m200000 -w30

# the one-process-per-node model: Spin's partial-order reduction on, and off
# for its effect; a run cut short by memory or time is reported, not fatal
if [ $procs = 1 ]; then
	echo "# spin -a ${defs[*]} fencing_procs.pml; gcc -O2 -DSAFETY -DMEMLIM=$memlim [-DNOREDUCE] pan.c; pan -m200000 -w$hashw"
	(cd "$tmp/procs" && spin -a "${defs[@]}" fencing_procs.pml >/dev/null) || die "spin -a fencing_procs.pml failed"
	spin_build "$tmp/procs" procs_por
	spin_build "$tmp/procs" procs_nored -DNOREDUCE
	spin_run "$tmp/procs" procs_por 1 -m200000 -w$hashw
	spin_run "$tmp/procs" procs_nored 1 -m200000 -w$hashw
fi

# ---- fencecheck ----
# FENCEBENCH RUNS: the fencebench runs, one table row each: exact:N and hc:N
# are fencebench -runs exact:N / hc:N (N goroutines); reduce:N is a reduced
# exact BFS (checker.BFSOptions.Reduce), fencebench -reduce -runs exact:N,
# added below when this tree's fencebench has -reduce. Another run is one more
# entry here.
fc_runlist=(exact:1 "exact:$cores" hc:1 "hc:$cores")
fc_label() { # entry -> the table's label
	local mode=${1%%:*} g=${1#*:} what
	case $mode in
	exact) what=exact ;;
	hc) what=hash-compact ;;
	reduce) what="exact, reduced (-reduce)" ;;
	*) what=$mode ;;
	esac
	if [ "$g" = 1 ]; then echo "fencecheck $what, 1 goroutine"; else echo "fencecheck $what, $g goroutines"; fi
}
fc_args() { # entry -> fencebench's arguments
	case ${1%%:*} in
	reduce) echo "-reduce -runs exact:${1#*:}" ;;
	*) echo "-runs $1" ;;
	esac
}
if [ $spin_only = 0 ]; then
	(cd "$repo" && go build -o "$tmp/fencebench" ./bench/cmd/fencebench) || die "go build ./bench/cmd/fencebench failed"
	usage=$("$tmp/fencebench" -h 2>&1 || true)
	[[ $usage == *-reduce* ]] && fc_runlist+=(reduce:1 "reduce:$cores")
	echo "# fencebench ${flags[*]}, runs: ${fc_runlist[*]}"
	if [ -n "$baseline" ]; then
		mkdir "$tmp/base"
		git -C "$repo" archive "$baseline" | tar -x -C "$tmp/base" || die "git archive $baseline failed"
		(cd "$tmp/base" && go build -o "$tmp/fencebench_base" ./bench/cmd/fencebench) ||
			die "go build ./bench/cmd/fencebench at $baseline failed"
		echo "# baseline: fencebench at $baseline ($(git -C "$repo" rev-parse --short "$baseline")), each run right after this tree's"
	fi
	# fc_run binary kv-name entry: one fencebench run into $tmp/fc_<kv-name>.kv
	fc_run() {
		local bin=$1 name=$2 run=$3 rc=0
		# shellcheck disable=SC2046 # fc_args is words
		timeout "$timeout_s" "$bin" "${flags[@]}" $(fc_args "$run") >"$tmp/$name.out" 2>&1 || rc=$?
		[ $rc = 124 ] && die "fencebench $run exceeded --timeout $timeout_s s"
		[ $rc = 0 ] || { cat "$tmp/$name.out" >&2; die "fencebench $run failed"; }
		grep -q 'stopped=complete' "$tmp/$name.out" || { cat "$tmp/$name.out" >&2; die "fencebench $run did not complete"; }
		# fields: states transitions seconds rate bytes_per_state peak_heap
		awk '{ for (i = 1; i <= NF; i++) { split($i, a, "="); v[a[1]] = a[2] }
			printf "name=%s states=%s transitions=%s seconds=%s rate=%s mem_mb=%.1f bps_store=%s bps_total=%.1f\n",
				v["run"] ":" v["goroutines"], v["states"], v["transitions"], v["seconds"], v["rate"],
				v["peak_heap"]/1048576, v["bytes_per_state"], v["peak_heap"]/v["states"] }' \
			"$tmp/$name.out" >"$tmp/fc_$name.kv"
	}
	base_usage=$([ -z "$baseline" ] || "$tmp/fencebench_base" -h 2>&1 || true)
	for run in "${fc_runlist[@]}"; do
		fc_run "$tmp/fencebench" "fc_${run/:/_}" "$run"
		# a baseline without -reduce has no reduced runs
		if [ -n "$baseline" ] && { [ "${run%%:*}" != reduce ] || [[ $base_usage == *-reduce* ]]; }; then
			fc_run "$tmp/fencebench_base" "base_${run/:/_}" "$run"
		fi
	done
	# --pairs: rounds of Spin exact and fencecheck exact, one right after the
	# other, so that each round's ratios share the machine's state of the moment
	if [ "$pairs" -gt 0 ]; then
		echo "# $pairs paired rounds: Spin exact, fencebench exact:1, exact:$cores"
		cp "$tmp/pan_exact" "$tmp/pan_pair"
		: >"$tmp/pairs"
		for ((i = 1; i <= pairs; i++)); do
			spin_run "$tmp" pair 0 -m200000 -w$hashw
			fc_run "$tmp/fencebench" pair_1 exact:1
			fc_run "$tmp/fencebench" pair_n "exact:$cores"
			echo "$(kv pair rate) $(kv pair_1 rate fc) $(kv pair_n rate fc)" >>"$tmp/pairs"
		done
	fi
fi
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- the table ----
echo
printf '| %-54s | %11s | %12s | %8s | %10s | %8s | %9s | %9s |\n' tool states transitions "time s" states/s "mem MB" "B/state" "B/st all"
printf '|%s|%s:|%s:|%s:|%s:|%s:|%s:|%s:|\n' -------------------------------------------------------- ------------ ------------- --------- ----------- --------- ---------- ----------
row() { # label kv-name [spin|fc]
	set -- "$1" "$2" "${3:-spin}"
	local label=$1 cut
	cut=$(kv "$2" incomplete "$3")
	[ -n "$cut" ] && [ "$cut" != - ] && label="$label (cut: $cut)"
	printf '| %-54s | %11s | %12s | %8s | %10s | %8s | %9s | %9s |\n' "$label" "$(kv "$2" states "$3")" \
		"$(kv "$2" transitions "$3")" "$(kv "$2" seconds "$3")" "$(kv "$2" rate "$3")" "$(kv "$2" mem_mb "$3")" \
		"$(kv "$2" bps_store "$3")" "$(kv "$2" bps_total "$3")"
}
row "Spin exact (1 core)" exact
row "Spin -DCOLLAPSE (1 core)" collapse
row "Spin -DHC4 (1 core)" hc4
row "Spin -DBITSTATE -w30 (1 core)" bitstate
if [ $spin_only = 0 ]; then
	for run in "${fc_runlist[@]}"; do
		row "$(fc_label "$run")" "fc_${run/:/_}" fc
		if [ -f "$tmp/fc_base_${run/:/_}.kv" ]; then row "$(fc_label "$run") @$baseline" "base_${run/:/_}" fc; fi
	done
fi
if [ $procs = 1 ]; then
	row "Spin POR exact, fencing_procs.pml" procs_por
	row "Spin -DNOREDUCE exact, fencing_procs.pml" procs_nored
fi
echo
echo "B/state: Spin (states + hash table) / stored; fencecheck BFSResult.BytesPerState (visited set + parent links)."
echo "B/st all: Spin total actual memory / stored; fencecheck peak Go heap / stored. mem MB: the same totals."
if [ $procs = 1 ]; then
	echo "fencing_procs.pml is another model of the protocol (a process per node, channels; bench/README.md):"
	echo "its states are not fencing.pml's. (cut: ...) marks a search cut short, by memory or time."
fi

if [ $spin_only = 0 ]; then
	se=$(kv exact states) fe=$(kv fc_exact_1 states fc)
	st=$(kv exact transitions) ft=$(kv fc_exact_1 transitions fc)
	if ! [[ $se =~ ^[0-9]+$ && $fe =~ ^[0-9]+$ && $ft =~ ^[0-9]+$ ]]; then
		echo "distinct states not compared: Spin $se, fencecheck $fe (a search cut short)"
	elif [ "$se" = "$fe" ]; then
		case $st in
		*e*) echo "distinct states: equal ($se); transitions: Spin $st (pan rounds them above 10^8), fencecheck $ft + 1" ;;
		$((ft + 1))) echo "distinct states: equal ($se), transitions: Spin $st = fencecheck $ft + 1 (Spin counts the initial state)" ;;
		*) echo "WARNING: distinct states equal ($se), but transitions differ: Spin $st, fencecheck $ft + 1: the models are no longer equivalent (model/ changed?)" ;;
		esac
	else
		echo "WARNING: distinct states differ: Spin $se, fencecheck $fe: the models are no longer equivalent (model/ changed?)"
	fi
	echo
	ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
	sr=$(kv exact rate) shr=$(kv hc4 rate)
	r1=$(ratio "$(kv fc_exact_1 rate fc)" "$sr") rn=$(ratio "$(kv "fc_exact_$cores" rate fc)" "$sr")
	h1=$(ratio "$(kv fc_hc_1 rate fc)" "$shr") hn=$(ratio "$(kv "fc_hc_$cores" rate fc)" "$shr")
	echo "ratios fencecheck/Spin, states per second:"
	echo "  exact vs Spin exact:   1 core $r1, $cores cores $rn"
	echo "  hash-compact vs HC4:   1 core $h1, $cores cores $hn"
	echo "  bytes/state exact:     $(ratio "$(kv fc_exact_1 bps_store fc)" "$(kv exact bps_store)") (stored), $(ratio "$(kv fc_exact_1 bps_total fc)" "$(kv exact bps_total)") (all memory)"
	echo "  bytes/state hash-comp: $(ratio "$(kv fc_hc_1 bps_store fc)" "$(kv hc4 bps_store)") (stored), $(ratio "$(kv fc_hc_1 bps_total fc)" "$(kv hc4 bps_total)") (all memory)"
	verdict() { awk -v v="$1" -v t="$2" -v op="$3" 'BEGIN { ok = (op == ">=") ? v >= t : v <= t; print (ok ? "met" : "NOT met") }'; }
	echo "targets:"
	echo "  per core >= 1.0 x Spin states/s:    exact $r1 $(verdict "$r1" 1.0 '>='), hash-compact $h1 $(verdict "$h1" 1.0 '>=')"
	echo "  $cores cores >= 1.8 x Spin states/s:     exact $rn $(verdict "$rn" 1.8 '>='), hash-compact $hn $(verdict "$hn" 1.8 '>=')"
	echo "  hash-compact <= 64 B/stored state:  $(kv fc_hc_1 bps_store fc) $(verdict "$(kv fc_hc_1 bps_store fc)" 64 '<=') (peak heap per state: $(kv fc_hc_1 bps_total fc))"
	if [ -n "$baseline" ]; then
		echo "ratios this tree / $baseline, states per second, each pair measured one after the other:"
		for run in "${fc_runlist[@]}"; do
			[ -f "$tmp/fc_base_${run/:/_}.kv" ] || continue
			echo "  $(fc_label "$run"): $(ratio "$(kv "fc_${run/:/_}" rate fc)" "$(kv "base_${run/:/_}" rate fc)")"
		done
	fi
	if [ "$pairs" -gt 0 ]; then
		echo "paired rounds, exact fencecheck/Spin states per second (Spin's own rate in parentheses):"
		awk -v cores="$cores" '{ printf "  round %d: 1 core %.2f, %d cores %.2f (Spin %d)\n", NR, $2 / $1, cores, $3 / $1, $1 }' "$tmp/pairs"
		# spread col: "median M (min A, max B)" of column col's ratio to Spin
		spread() {
			awk -v c="$1" '{ print $c / $1 }' "$tmp/pairs" | sort -g | awk '{ v[NR] = $1 }
				END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
					printf "%.2f (min %.2f, max %.2f)", m, v[1], v[NR] }'
		}
		med1=$(spread 2) medn=$(spread 3)
		echo "  median of $pairs: 1 core $med1 $(verdict "${med1%% *}" 1.0 '>='), $cores cores $medn $(verdict "${medn%% *}" 1.8 '>=')"
	fi
fi
if [ $procs = 1 ]; then
	pp=$(kv procs_por states) pn=$(kv procs_nored states)
	if [ "$pp" != - ] && [ "$pn" != - ] && [ "$(kv procs_por incomplete)" = - ] && [ "$(kv procs_nored incomplete)" = - ]; then
		echo "fencing_procs.pml: partial-order reduction stores $(awk -v a="$pp" -v b="$pn" 'BEGIN { printf "%.2f", a / b }') of the states" \
			"($pp of $pn), $(kv procs_por transitions) of $(kv procs_nored transitions) transitions;" \
			"fencing.pml stores $(kv exact states)"
	fi
fi

# ---- the buggy variant ----
# It runs at the bound with OPS and INFLIGHT at least 2 (a holder that also
# writes, and room for its stale write beside the new grant) and no dups,
# crashes, restarts or forgeries (but what the variant needs, vneed NAME=MIN):
# Spin's depth-first search wanders into the fault space long before it meets
# the stale write.
if [ $variant = 1 ]; then
	echo
	for k in OPS INFLIGHT; do [ "${cfg[$k]}" -ge 2 ] || cfg[$k]=2; done
	for k in DUPS CRASHES RESTARTS FORGERIES SINKRESTARTS SKEW; do cfg[$k]=0; done
	if [ -n "$vneed" ]; then
		k=${vneed%=*} n=${vneed#*=}
		[ "${cfg[$k]}" -ge "$n" ] || cfg[$k]=$n
	fi
	bound_args
	echo "# variant $vname at ${shown[*]}: spin -a -D$vmacro; pan -m200000 (stops at the first assertion violation)"
	# spin_variant dir file name extra-gcc-flags...
	spin_variant() {
		local dir=$1 file=$2 name=$3 rc=0 cut; shift 3
		(cd "$dir" && rm -f pan.* && spin -a "-D$vmacro" "${defs[@]}" "$file" >/dev/null) || die "spin -a $file failed"
		spin_build "$dir" "$name" "$@"
		(cd "$dir" && timeout "$timeout_s" "./pan_$name" -m200000 -w$hashw >"$tmp/spin_$name.out" 2>&1) || rc=$?
		cut=$(pan_cut "$tmp/spin_$name.out" $rc)
		if grep -q 'assertion violated' "$tmp/spin_$name.out"; then
			echo "$(grep -m1 'assertion violated' "$tmp/spin_$name.out" | sed 's/^pan:1: //'), after $(awk '/states, stored/ {print $1}' "$tmp/spin_$name.out") states," \
				"$(awk '/^pan: elapsed time/ {print $4}' "$tmp/spin_$name.out") s"
		elif [ -n "$cut" ]; then
			echo "none found before the search was cut short by $cut (--memlim $memlim MB, --timeout $timeout_s s, pan -m200000): incomplete, not a pass"
		else
			echo "no violation found at this bound ($(grep -m1 'errors:' "$tmp/spin_$name.out" | sed 's/^ *//'))"
		fi
	}
	echo "Spin, fencing.pml:       $(spin_variant "$tmp" fencing.pml var -DNOREDUCE)"
	[ $procs = 1 ] && [ $vprocs = 0 ] && echo "Spin, fencing_procs.pml: not run (it has no $vname)"
	[ $procs = 1 ] && [ $vprocs = 1 ] && echo "Spin, fencing_procs.pml: $(spin_variant "$tmp/procs" fencing_procs.pml var_procs)"
	if [ $spin_only = 0 ]; then
		"$tmp/fencebench" "${flags[@]}" -variant "$vname" -runs "hc:$cores" >"$tmp/fc_var.out" 2>&1 || true
		echo "fencecheck:              $(awk '{ for (i = 1; i <= NF; i++) { split($i, a, "="); v[a[1]] = a[2] }
			if (v["violation"] == "-") printf "stopped=%s, no violation, %s states, depth %s, %s s", v["stopped"], v["states"], v["depth"], v["seconds"]
			else printf "stopped=%s violation=%s at depth %s (a shortest counterexample), after %s states, %s s", v["stopped"], v["violation"], v["depth"], v["states"], v["seconds"] }' "$tmp/fc_var.out")"
	fi
fi
