#!/usr/bin/env bash
# bench/run.sh: fencecheck's exhaustive BFS against Spin on the same bounded
# model (bench/fencing.pml = model.Protocol{} at the bound below). Builds and
# runs the Spin verifier (exact, COLLAPSE, HC4, BITSTATE), runs
# bench/cmd/fencebench (checker.BFS exact and hash-compact, on 1 goroutine and
# on all cores), checks that both tools stored the same number of distinct
# states, and prints one table with the ratios fencecheck/Spin. Then it checks
# that Spin finds the buggy variant's counterexample (and fencecheck too).
#
# Usage: bench/run.sh [--bound small|faults|big] [-D NAME=VALUE]... [--timeout SECONDS]
#                     [--memlim MB] [--no-variant] [--spin-only] [--keep]
#   --bound small   (default) OPS=2 TTL=1 DROPS=1: ~4.9M states, a few minutes in all
#   --bound faults  OPS=1 TTL=2 and every fault budget 1: ~2.8M states
#   --bound big     OPS=2 TTL=1 DROPS=1 CRASHES=1: ~25M states, ~4 GB for Spin, many minutes
#   -D NAME=VALUE   override one bound (W R TTL OPS GRANTS INFLIGHT DROPS DUPS CRASHES RESTARTS FORGERIES)
#   --timeout S     wall-clock limit of each single run (default 600)
#   --memlim MB     Spin's -DMEMLIM (default 6000)
# Everything is built and run in a temporary directory, removed at exit.
set -euo pipefail

die() { echo "run.sh: $*" >&2; exit 2; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

bound=small timeout_s=600 memlim=6000 variant=1 spin_only=0 keep=0
declare -A over=()
while [ $# -gt 0 ]; do
	case $1 in
	--bound) bound=${2:?}; shift 2 ;;
	-D) [[ ${2:-} == *=* ]] || die "-D wants NAME=VALUE"; over[${2%%=*}]=${2#*=}; shift 2 ;;
	-D*=*) a=${1#-D}; over[${a%%=*}]=${a#*=}; shift ;;
	--timeout) timeout_s=${2:?}; shift 2 ;;
	--memlim) memlim=${2:?}; shift 2 ;;
	--no-variant) variant=0; shift ;;
	--spin-only) spin_only=1; shift ;;
	--keep) keep=1; shift ;;
	-h|--help) sed -n '2,22p' "$0"; exit 0 ;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
done

command -v spin >/dev/null || die "spin not found: install it with  apt-get install spin  (Spin 6.x)"
command -v gcc >/dev/null || die "gcc not found: the Spin verifier is C (apt-get install gcc)"
command -v timeout >/dev/null || die "timeout (coreutils) not found"
[ $spin_only = 1 ] || command -v go >/dev/null || die "go not found (or use --spin-only)"

# The bound: Promela macro = fencebench flag.
declare -A cfg=([W]=2 [R]=1 [TTL]=1 [OPS]=2 [GRANTS]=2 [INFLIGHT]=2 [DROPS]=1 [DUPS]=0 [CRASHES]=0
	[RESTARTS]=0 [FORGERIES]=0)
hashw=23
case $bound in
small) ;;
faults) cfg+=([TTL]=2 [OPS]=1 [DUPS]=1 [CRASHES]=1 [RESTARTS]=1 [FORGERIES]=1); hashw=22 ;;
big) cfg+=([CRASHES]=1); hashw=25 ;;
*) die "unknown bound $bound (small, faults, big)" ;;
esac
for k in "${!over[@]}"; do
	[ -n "${cfg[$k]+x}" ] || die "unknown bound name $k"
	[[ ${over[$k]} =~ ^[0-9]+$ ]] || die "$k=${over[$k]}: not a number"
	cfg[$k]=${over[$k]}
	[ "$k" = OPS ] && hashw=25 # a guess: larger bounds want a larger hash table
done
declare -A flagname=([W]=workers [R]=resources [TTL]=ttl [OPS]=ops [GRANTS]=grants [INFLIGHT]=inflight
	[DROPS]=drops [DUPS]=dups [CRASHES]=crashes [RESTARTS]=restarts [FORGERIES]=forgeries)
order=(W R TTL OPS GRANTS INFLIGHT DROPS DUPS CRASHES RESTARTS FORGERIES)
defs=() flags=() shown=()
for k in "${order[@]}"; do
	defs+=("-D$k=${cfg[$k]}")
	flags+=("-${flagname[$k]}" "${cfg[$k]}")
	shown+=("$k=${cfg[$k]}")
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fencebench.XXXXXX")
cleanup() { if [ $keep = 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi; }
trap cleanup EXIT
cp "$here/fencing.pml" "$tmp/"
cores=$(nproc)

echo "# fencecheck vs Spin, bound: ${shown[*]} (replicas=1, skew=0)"
echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $cores cores," \
	"$(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo); $(spin -V | head -1);" \
	"$(gcc --version | head -1); $( [ $spin_only = 1 ] || go version | cut -d' ' -f3)"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- Spin ----
spin_build() { # name, extra gcc flags...
	local name=$1; shift
	(cd "$tmp" && gcc -O2 -DSAFETY -DNOREDUCE -DMEMLIM="$memlim" "$@" -o "pan_$name" pan.c) ||
		die "gcc failed building pan_$name"
}
# spin_run name pan-args... -> fields in $tmp/spin_name.kv
spin_run() {
	local name=$1; shift
	local out="$tmp/spin_$name.out" rc=0
	(cd "$tmp" && timeout "$timeout_s" "./pan_$name" "$@") >"$out" 2>&1 || rc=$?
	[ $rc = 124 ] && die "pan_$name exceeded --timeout $timeout_s s (see a smaller --bound)"
	grep -q "max search depth too small" "$out" && die "pan_$name: max search depth too small: raise -m"
	grep -q "out of memory" "$out" && die "pan_$name ran out of memory (--memlim $memlim): $(grep -m1 'out of memory' "$out")"
	awk -v name="$name" '
		/^State-vector/ { vec = $2; err = $NF }
		/states, stored/ { stored = $1 }
		/transitions \(= stored\+matched\)/ { trans = $1 }
		/actual memory usage for states/ { smem = $1 }
		/memory used for hash (table|array)/ { hmem = $1 }
		/total actual memory usage/ { tmem = $1 }
		/^pan: elapsed time/ { secs = $4 }
		END {
			if (stored == "" || secs == "") { print "bad=1"; exit }
			if (smem == "") smem = 0
			if (secs == 0) secs = 0.01
			printf "name=%s states=%d transitions=%d seconds=%s rate=%.0f vec=%s errors=%s ", name, stored, trans, secs, stored/secs, vec, err
			printf "mem_mb=%.1f bps_store=%.1f bps_total=%.1f\n", tmem, (smem+hmem)*1048576/stored, tmem*1048576/stored
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
spin_build exact
spin_build collapse -DCOLLAPSE
spin_build hc4 -DHC4
spin_build bitstate -DBITSTATE
spin_run exact -m200000 -w$hashw
spin_run collapse -m200000 -w$hashw
spin_run hc4 -m200000 -w$hashw
spin_run bitstate -m200000 -w30

# ---- fencecheck ----
fc_runs=""
if [ $spin_only = 0 ]; then
	(cd "$repo" && go build -o "$tmp/fencebench" ./bench/cmd/fencebench) || die "go build ./bench/cmd/fencebench failed"
	echo "# fencebench ${flags[*]} -runs exact:1,exact:$cores,hc:1,hc:$cores"
	for run in exact:1 exact:$cores hc:1 hc:$cores; do
		name=fc_${run/:/_}
		rc=0
		timeout "$timeout_s" "$tmp/fencebench" "${flags[@]}" -runs "$run" >"$tmp/$name.out" 2>&1 || rc=$?
		[ $rc = 124 ] && die "fencebench $run exceeded --timeout $timeout_s s"
		[ $rc = 0 ] || { cat "$tmp/$name.out" >&2; die "fencebench $run failed"; }
		grep -q 'stopped=complete' "$tmp/$name.out" || { cat "$tmp/$name.out" >&2; die "fencebench $run did not complete"; }
		# fields: states transitions seconds rate bytes_per_state peak_heap
		awk '{ for (i = 1; i <= NF; i++) { split($i, a, "="); v[a[1]] = a[2] }
			printf "name=%s states=%s transitions=%s seconds=%s rate=%s mem_mb=%.1f bps_store=%s bps_total=%.1f\n",
				v["run"] ":" v["goroutines"], v["states"], v["transitions"], v["seconds"], v["rate"],
				v["peak_heap"]/1048576, v["bytes_per_state"], v["peak_heap"]/v["states"] }' \
			"$tmp/$name.out" >"$tmp/fc_$name.kv"
		fc_runs+=" $name"
	done
fi
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- the table ----
echo
printf '| %-40s | %11s | %12s | %8s | %10s | %8s | %9s | %9s |\n' tool states transitions "time s" states/s "mem MB" "B/state" "B/st all"
printf '|%s|%s:|%s:|%s:|%s:|%s:|%s:|%s:|\n' ------------------------------------------ ------------ ------------- --------- ----------- --------- ---------- ----------
row() { # label kv-name [spin|fc]
	set -- "$1" "$2" "${3:-spin}"
	printf '| %-40s | %11s | %12s | %8s | %10s | %8s | %9s | %9s |\n' "$1" "$(kv "$2" states "$3")" \
		"$(kv "$2" transitions "$3")" "$(kv "$2" seconds "$3")" "$(kv "$2" rate "$3")" "$(kv "$2" mem_mb "$3")" \
		"$(kv "$2" bps_store "$3")" "$(kv "$2" bps_total "$3")"
}
row "Spin exact (1 core)" exact
row "Spin -DCOLLAPSE (1 core)" collapse
row "Spin -DHC4 (1 core)" hc4
row "Spin -DBITSTATE -w30 (1 core)" bitstate
if [ $spin_only = 0 ]; then
	row "fencecheck exact, 1 goroutine" fc_exact_1 fc
	row "fencecheck exact, $cores goroutines" "fc_exact_$cores" fc
	row "fencecheck hash-compact, 1 goroutine" fc_hc_1 fc
	row "fencecheck hash-compact, $cores goroutines" "fc_hc_$cores" fc
fi
echo
echo "B/state: Spin (states + hash table) / stored; fencecheck BFSResult.BytesPerState (visited set + parent links)."
echo "B/st all: Spin total actual memory / stored; fencecheck peak Go heap / stored. mem MB: the same totals."

if [ $spin_only = 0 ]; then
	se=$(kv exact states) fe=$(kv fc_exact_1 states fc)
	if [ "$se" = "$fe" ]; then
		echo "distinct states: equal ($se), transitions: Spin $(kv exact transitions) = fencecheck $(kv fc_exact_1 transitions fc) + 1 (Spin counts the initial state)"
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
	echo "  per core >= 0.5 x Spin states/s:    exact $r1 $(verdict "$r1" 0.5 '>='), hash-compact $h1 $(verdict "$h1" 0.5 '>=')"
	echo "  $cores cores > 1.0 x Spin states/s:      exact $rn $(verdict "$rn" 1.0001 '>='), hash-compact $hn $(verdict "$hn" 1.0001 '>=')"
	echo "  hash-compact <= 64 B/stored state:  $(kv fc_hc_1 bps_store fc) $(verdict "$(kv fc_hc_1 bps_store fc)" 64 '<=') (peak heap per state: $(kv fc_hc_1 bps_total fc))"
fi

# ---- the buggy variant ----
if [ $variant = 1 ]; then
	echo
	# check-then-write needs a holder that also writes: OPS >= 2
	if [ "${cfg[OPS]}" -lt 2 ]; then
		defs=("${defs[@]/-DOPS=*/-DOPS=2}")
		for i in "${!flags[@]}"; do [ "${flags[$i]}" = -ops ] && flags[$((i + 1))]=2; done
	fi
	echo "# buggy variant: spin -a -DCHECK_THEN_WRITE ${defs[*]}; pan -m200000 (stops at the first assertion violation)"
	(cd "$tmp" && rm -f pan.* && spin -a -DCHECK_THEN_WRITE "${defs[@]}" fencing.pml >/dev/null) || die "spin -a failed"
	spin_build ctw
	(cd "$tmp" && timeout "$timeout_s" ./pan_ctw -m200000 -w$hashw >spin_ctw.out 2>&1) || true
	if grep -q 'assertion violated' "$tmp/spin_ctw.out"; then
		echo "Spin:       $(grep -m1 'assertion violated' "$tmp/spin_ctw.out" | sed 's/^pan:1: //'), after" \
			"$(awk '/states, stored/ {print $1}' "$tmp/spin_ctw.out") states, $(awk '/^pan: elapsed time/ {print $4}' "$tmp/spin_ctw.out") s"
	else
		echo "Spin:       no violation found at this bound (CHECK_THEN_WRITE needs OPS >= 2)"
	fi
	if [ $spin_only = 0 ]; then
		"$tmp/fencebench" "${flags[@]}" -variant check-then-write -runs "hc:$cores" >"$tmp/fc_ctw.out" 2>&1 || true
		echo "fencecheck: $(awk '{ for (i = 1; i <= NF; i++) { split($i, a, "="); v[a[1]] = a[2] }
			printf "stopped=%s violation=%s at depth %s (a shortest counterexample), after %s states, %s s", v["stopped"], v["violation"], v["depth"], v["states"], v["seconds"] }' "$tmp/fc_ctw.out")"
	fi
fi
