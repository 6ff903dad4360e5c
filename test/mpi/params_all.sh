#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Invalid values of every adapt2 MCA parameter, as ompi_info lists them (a new
# parameter is covered as soon as it is registered: it must be given a rule
# below, or this test fails; so must every line of params.def, the table
# whose ranges the numeric rules take). Every parameter gets each value of
# BAD: negative, zero, huge (a 20-digit number, and LONG_MAX), malformed
# (abc, 12x) and empty; some get more (nodes, trace). Small broadcasts
# and reductions (bcast_check, reduce_check, np 2, every result checked), or
# allgathers and reduce_scatter_blocks (ring_check) for the parameters only
# those read, must still succeed and:
#   - a value the parameter does not accept is reported once per process, by
#     "invalid value 'V' for MCA parameter coll_adapt2_NAME (why); using D"
#     (V as adapt2 received it, D the default);
#   - a value it accepts is not reported.
# Open MPI parses numeric parameters itself before adapt2 sees them: the value
# adapt2 gets is read back with ompi_info under the same environment, and the
# test judges that one (a table at the end shows what Open MPI made of each
# value, and adapt2's verdict).
#
# To keep it short (about 90 mpiruns), parameters read in the same context
# share runs, one or two per value; when a parameter fails in a shared run it
# is run again alone, and the verdict is the one of its own run. Then: every
# parameter invalid at once (each still reported once per process), and the
# parameters with cases of their own (priority, inject_send_failure, trace,
# nodes).
. "$(dirname "$0")/lib.sh"
# (lib.sh sets the GPU segment floor to 0 for the other scripts; here each
# parameter is checked against its own default)
unset OMPI_MCA_coll_adapt2_device_segment_size
# The table of the parameters (their ranges); read before the cd below.
DEF="${ADAPT2_SRCDIR:-$(dirname "$0")/../..}/ompi/mca/coll/adapt2/params.def"
[ "${DEF#/}" = "$DEF" ] && DEF="$PWD/$DEF"

TIMEOUT=${ADAPT2_TEST_TIMEOUT:-60}
OMPI_INFO=${OMPI_INFO:-ompi_info}
NP=2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK" "$LOG" "$RANKS"' EXIT
cd "$WORK" || exit 1 # trace files land here

LONG_MAX=9223372036854775807
BAD=(-5 0 99999999999999999999 $LONG_MAX abc 12x "")

# What each parameter accepts and where it is read. The numeric ranges are
# params.def's (the table the component checks its values against, one line
# per parameter); RULES says what that table cannot.  NAME ACCEPTS [WHERE]
#   ACCEPTS  range  an INT or LONG parameter: params.def's MIN:MAX (MAX
#            "max": no upper bound, for LONG_MAX, and for INT_MAX in an INT
#            parameter, whose value cannot exceed it anyway; INT_MAX in a LONG
#            parameter is 2147483647: the segment sizes, as adapt2 cuts
#            messages with int counts, so a larger size must be reported);
#            names:A,B,...  a STRING parameter: one of the names (the empty
#            string may be taken as the default or reported);
#            names  an ENUM parameter: one of params.def's names, or its
#            number (Open MPI rejects anything else before adapt2 sees it,
#            and adapt2 reports the value as given, with the one it uses);
#            any  every value is valid;
#            own  checked by a case of its own below (the parameter's name
#            must have one), or by its own script (rules: test/mpi/rules.sh).
#   WHERE    flat (default): read by every call;
#            multilevel: read only for multi-level trees (coll_adapt2_nodes
#            block:1 makes each of the 2 ranks a node);
#            traced: read only when coll_adapt2_trace is set (the
#            multi-level runs set it);
#            separate: in runs without the parameters a valid value of it
#            switches off (device=0 leaves the device_* parameters unread,
#            topology=0 the multi-level ones), in the multi-level context;
#            ring: read only by allgather and reduce_scatter_block (and
#            their non-blocking forms): judged in ring_check runs.
RULES="
priority                          own
verbose                           any
recv_window                       range
send_window                       range
pool_max_bytes                    range
schedule_cache                    range
trace                             own
trace_max_events                  range                  traced
detach_min_message                range
direct_path                       range
direct_detach_max                 range
direct_watch_max                  range
detach_max_message                range
detach_max_bytes                  range
detach_grace_us                   range
detach_watch_min_bytes            range
detach_await_min_bytes            range
progress_thread                   range
progress_interval_us              range
transport                         names
ucx_thread_multiple               range
bcast_algorithm                   names      
bcast_segment_size                range
bcast_fanout                      range
bcast_radix                       range
bcast_chains                      range
reduce_algorithm                  names      
reduce_segment_size               range
allreduce_algorithm               names
allreduce_segment_size            range
allreduce_ring_min_bytes          range
allreduce_ring_max_bytes          range
allreduce_rabenseifner_min_bytes  range
allreduce_rabenseifner_max_bytes  range
allreduce_recdoubling_max_bytes   range
allreduce_recdoubling_max_ranks   range
allreduce_recdoubling_few_ranks_max_bytes range
allgather_algorithm               names                  ring
allgather_bruck_max_bytes         range                  ring
allgather_direct_max_bytes        range                  ring
allgather_linear_max_bytes        range                  ring
allgather_multi_level_max_bytes   range                  ring
allgather_multi_level_pipeline_min_bytes range         ring
allgather_segment_size            range                  ring
reduce_scatter_block_algorithm    names                  ring
reduce_scatter_block_halving_max_bytes range             ring
reduce_scatter_block_segment_size range                  ring
rules                             own
reproducible                      range
topology                          range                  separate
nodes                             own
node_algorithm                    names                 multilevel
numa_algorithm                    names                 multilevel
topology_segment_size             range                  multilevel
node_segment_size                 range                  multilevel
numa_segment_size                 range                  multilevel
node_message_cost                 range                  multilevel
single_copy                       names
core_message_cost                 range
device                            range                  separate
device_streams                    range
device_segment_size               range
device_bounce_max                 range
device_queue_capacity             range
device_mock                       range
device_pinned_max_bytes           range
inject_send_failure               own
"
# ----------------------------------------------------------------- params.def
# TYPE and MIN:MAX of every parameter of the table, as the checks use them.
declare -A DEF_TYPE DEF_RANGE DEF_NAMES
def_bound() { # TYPE BOUND: the bound as a number, or max
    case $2 in
    LONG_MAX) echo max ;;
    INT_MAX) if [ "$1" = INT ]; then echo max; else echo 2147483647; fi ;;
    INT_MIN) echo -2147483648 ;;
    *) [[ $2 =~ ^-?[0-9]+$ ]] && echo "$2" ;;
    esac
}
if [ ! -r "$DEF" ]; then
    echo "FAIL cannot read $DEF (set ADAPT2_SRCDIR to the source tree)"
    exit 1
fi
def_problems=()
while read -r type name min max; do
    DEF_TYPE[$name]=$type
    case $type in
    STRING | ENUM) ;;
    INT | LONG)
        lo=$(def_bound "$type" "$min") hi=$(def_bound "$type" "$max")
        if [ -z "$lo" ] || [ -z "$hi" ]; then
            def_problems+=("params.def: $name ($type): cannot read the range '$min', '$max'")
        else
            DEF_RANGE[$name]=$lo:$hi
        fi ;;
    *) def_problems+=("params.def: $name: unknown type '$type'") ;;
    esac
done < <(awk -F', *' '/^ADAPT2_PARAM\(/ { sub(/^ADAPT2_PARAM\( */, "", $1); print $1, $2, $4, $5 }' "$DEF")
while read -r name names; do DEF_NAMES[$name]=$names; done < <(python3 "$(dirname "$DEF")/../../../../contrib/adapt2-params" --enums)
n_def=$(grep -c '^ADAPT2_PARAM(' "$DEF")
[ ${#DEF_TYPE[@]} -eq "$n_def" ] ||
    def_problems+=("params.def has $n_def ADAPT2_PARAM lines, ${#DEF_TYPE[@]} distinct parameters read from them")
[ "$n_def" -ge 10 ] || def_problems+=("params.def: only $n_def parameters read from $DEF")

# ----------------------------------------------------------------- the list
declare -A ACCEPTS WHERE DEFAULT TYPE EFF
PARAMS=()
for try in 1 2 3 4 5 6 7 8 9 10; do # nothing while the component is being rebuilt: retry
    list=$(env -u OMPI_MCA_coll_adapt2_priority "$OMPI_INFO" --param coll adapt2 --level 9 --parsable 2>&1)
    echo "$list" | grep -q '^mca:coll:adapt2:param:' && break
    sleep 3
done
while IFS=: read -r _ _ _ _ name field value; do
    p=${name#coll_adapt2_}
    case $field in
    value) DEFAULT[$p]=$value; PARAMS+=("$p") ;;
    type) TYPE[$p]=$value ;;
    esac
done < <(echo "$list" | grep '^mca:coll:adapt2:param:coll_adapt2_')
if [ ${#PARAMS[@]} -lt 10 ]; then
    echo "FAIL ompi_info lists ${#PARAMS[@]} adapt2 parameters:"
    echo "$list" | head -20
    exit 1
fi
echo "${#PARAMS[@]} parameters: ${PARAMS[*]}"
declare -A RULED
while read -r p accepts where; do
    [ -z "$p" ] && continue
    RULED[$p]=1
    if [ -z "${DEF_TYPE[$p]+set}" ]; then
        def_problems+=("params_all.sh has a rule for coll_adapt2_$p, which params.def does not have")
        continue
    fi
    case $accepts in
    range)
        if [ -z "${DEF_RANGE[$p]+set}" ]; then # a STRING (or a range already reported unreadable)
            [ "${DEF_TYPE[$p]}" = STRING ] &&
                def_problems+=("coll_adapt2_$p is a STRING in params.def: its rule must be names:..., any or own")
            continue
        fi
        accepts=${DEF_RANGE[$p]} ;;
    names)
        [ "${DEF_TYPE[$p]}" = ENUM ] || { def_problems+=("coll_adapt2_$p is ${DEF_TYPE[$p]} in params.def, not an ENUM: its rule must list its names:..."); continue; }
        accepts=enum:${DEF_NAMES[$p]} ;;
    names:*)
        [ "${DEF_TYPE[$p]}" = STRING ] || { def_problems+=("coll_adapt2_$p is ${DEF_TYPE[$p]} in params.def, its rule gives names: use range"); continue; } ;;
    any | own) ;;
    *) def_problems+=("params_all.sh: the rule of coll_adapt2_$p says '$accepts' (range, names:..., any or own)"); continue ;;
    esac
    case ${where:-flat} in
    flat | multilevel | traced | separate | ring) ;;
    *) def_problems+=("params_all.sh: the rule of coll_adapt2_$p says it is read in '$where' (flat, multilevel, traced, separate or ring)"); continue ;;
    esac
    ACCEPTS[$p]=$accepts
    WHERE[$p]=${where:-flat}
    if [ -z "${DEFAULT[$p]+set}" ]; then
        failed=$((failed + 1))
        echo "FAIL params_all.sh has a rule for coll_adapt2_$p, which ompi_info does not list"
    fi
done <<<"$RULES"
for p in "${!DEF_TYPE[@]}"; do
    [ -n "${RULED[$p]+set}" ] ||
        def_problems+=("coll_adapt2_$p (${DEF_TYPE[$p]}${DEF_RANGE[$p]:+ ${DEF_RANGE[$p]}}) is in params.def and has no rule in params_all.sh: add one")
done
if [ ${#def_problems[@]} -gt 0 ]; then
    printf 'FAIL %s\n' "${def_problems[@]}"
    echo "(params.def: $DEF)"
    exit 1
fi
for p in "${PARAMS[@]}"; do
    if [ -z "${ACCEPTS[$p]+set}" ]; then
        failed=$((failed + 1))
        echo "FAIL coll_adapt2_$p (${TYPE[$p]}, default '${DEFAULT[$p]}') has no rule in params_all.sh: add one"
    fi
done

# The value adapt2 receives for each parameter when every one is given $1 (as
# Open MPI parses it: numbers with strtoull, suffixes k/m/g, out-of-range
# values dropped), into EFF.
declare -A EFF_CACHE # "value|p" -> what p receives
effective() {
    local v=$1 env=() p try
    EFF=()
    for p in "${PARAMS[@]}"; do env+=("OMPI_MCA_coll_adapt2_$p=$v"); done
    # ompi_info lists nothing while the component is being rebuilt: retry
    for ((try = 0; try < 10 && ! ${EFF_CACHE["$v|"]-0}; ++try)); do
        [ $try -gt 0 ] && sleep 3
        while IFS=: read -r _ _ _ _ name field value; do
            [ "$field" = value ] && EFF_CACHE["$v|${name#coll_adapt2_}"]=$value && EFF_CACHE["$v|"]=1
        done < <(env "${env[@]}" "$OMPI_INFO" --param coll adapt2 --level 9 --parsable 2>/dev/null |
                 grep '^mca:coll:adapt2:param:coll_adapt2_')
    done
    if [ "${EFF_CACHE["$v|"]-0}" != 1 ]; then
        echo "FAIL ompi_info lists no adapt2 parameter with every one set to '$v'"
        exit 1
    fi
    for p in "${PARAMS[@]}"; do EFF[$p]=${EFF_CACHE["$v|$p"]-}; done
    # An ENUM value Open MPI rejects leaves the default, and adapt2 reports the
    # value as it was given: judge that one.
    for p in "${PARAMS[@]}"; do [ "${DEF_TYPE[$p]}" = ENUM ] && EFF[$p]=$v; done
    return 0
}

# verdict P V: whether parameter P accepts V: valid, invalid or either.
verdict() {
    local rule=${ACCEPTS[$1]} v=$2
    case $rule in
    any) echo valid ;;
    fixed:*) echo "${rule#fixed:}" ;;
    enum:*) # a name, or a name's number
        local names=",${rule#enum:}," count
        count=$(echo "${rule#enum:}" | tr ',' '\n' | grep -c .)
        if [ -z "$v" ]; then echo either
        elif [[ $names == *",$v,"* ]]; then echo valid
        elif [[ $v =~ ^[0-9]{1,9}$ ]] && [ "$v" -lt "$count" ]; then echo valid
        else echo invalid; fi ;;
    names:*)
        if [ -z "$v" ]; then echo either
        elif [[ ",${rule#names:}," == *",$v,"* ]]; then echo valid
        else echo invalid; fi ;;
    *:*)
        local min=${rule%:*} max=${rule#*:}
        [ "$max" = max ] && max=$LONG_MAX
        if [[ ! $v =~ ^-?[0-9]+$ ]] || [ ${#v} -gt 19 ]; then echo invalid
        elif [ "$v" -ge "$min" ] && [ "$v" -le "$max" ]; then echo valid
        else echo invalid; fi ;;
    esac
}

# ----------------------------------------------------------------- running
# The programs of a shared run: broadcasts (every root, contiguous and
# vector), then reduce, ireduce, allreduce, iallreduce; both end with an
# allreduce of their error counts. Open MPI 4.1's argument checks reject
# predefined ops on derived types, hence mpi_param_check 0.
# Counters are not checked (--expect none): some valid values hand calls to
# the previous component (device_mock=1 does so with the vector type). The
# reductions use predefined types only, as Open MPI 4.1's own reductions
# (the previous component) get derived types wrong.
BCAST=("$BIN/bcast_check" -t int,vector -s 1,5000,20000 --expect none)  # 20000: the engine's path
REDUCE=("$BIN/reduce_check" --coll reduce,ireduce,allreduce,iallreduce --ops sum
        --types int,double --counts 1,1500 --roots 1 --expect none)
# The ring parameters' runs: allgathers and reduce_scatter_blocks, blocking
# and not, in place and not (counters checked: none of BAD is "previous").
# --segsizes keep: the segment sizes stay as the environment set them.
RING=("$BIN/ring_check" --types int --ops sum --counts 1,700 --depth 2 --segsizes keep)
FLAGS=(--mca mpi_param_check 0)
declare -A CONTEXT=([flat]="" [multilevel]="OMPI_MCA_coll_adapt2_nodes=block:1"
                    [separate]="OMPI_MCA_coll_adapt2_nodes=block:1" [ring]="")
run_no=0

# launch OUT ENV... -- PROGRAM ARGS: one mpirun under the timeout, with the
# environment given; the output goes to OUT. Returns mpirun's status.
launch() {
    local out=$1 env=()
    shift
    while [ "$1" != "--" ]; do env+=("$1"); shift; done
    shift
    local rc=0
    env "${env[@]}" timeout -k 10 "$TIMEOUT" "$MPIRUN" $MPI_FLAGS "${FLAGS[@]}" -np $NP "$@" >"$out" 2>&1 || rc=$?
    [ $rc -eq 124 ] && echo "TIMEOUT after $TIMEOUT s" >>"$out"
    return $rc
}

# The lines reporting parameter P in the files given.
reports() {
    local p=$1
    shift
    cat "$@" | grep -F "for MCA parameter coll_adapt2_$p (" || true
}

# judge P V EFF FILES...: whether the reports of P in the files agree with
# its verdict on EFF (the value adapt2 received). Sets OUTCOME (for the table)
# and, when they do not agree, WHY.
judge() {
    local p=$1 v=$2 eff=$3
    shift 3
    local lines n dup bad="" line
    lines=$(reports "$p" "$@")
    n=$(printf '%s' "$lines" | grep -c . || true)
    dup=$(printf '%s\n' "$lines" | grep . | sed 's/\].*/]/' | sort | uniq -d | tr '\n' ' ')
    local using=${DEFAULT[$p]}
    [ "$p" = nodes ] && using="(Open MPI's view)"
    while IFS= read -r line; do
        [ -z "$line" ] && continue
        [[ $line == *"invalid value '$eff' for MCA parameter coll_adapt2_$p ("*"); using $using" ]] || bad=$line
    done <<<"$lines"
    WHY=""
    case $(verdict "$p" "$eff") in
    valid)
        OUTCOME=accepted
        [ "$n" -gt 0 ] && WHY="coll_adapt2_$p='$v' (adapt2 got '$eff', a valid value) was reported as invalid: $(echo "$lines" | head -1)" ;;
    invalid)
        OUTCOME=rejected
        [ "$n" -eq 0 ] && OUTCOME=SILENT && WHY="coll_adapt2_$p='$v' (adapt2 got '$eff', invalid) was not reported" ;;
    either)
        OUTCOME=$([ "$n" -gt 0 ] && echo rejected || echo "not reported") ;;
    esac
    if [ -z "$WHY" ] && [ -n "$dup" ]; then
        OUTCOME="reported repeatedly"
        WHY="coll_adapt2_$p='$v' was reported more than once by a process (${dup% }): $(echo "$lines" | head -1)"
    elif [ -z "$WHY" ] && [ -n "$bad" ]; then
        OUTCOME="report malformed"
        WHY="coll_adapt2_$p='$v': the report does not say \"invalid value '$eff' for MCA parameter coll_adapt2_$p (...); using $using\": $bad"
    fi
    [ -z "$WHY" ]
}

declare -A ROW # p -> what happened with each value, for the table at the end
# record P V OUTCOME: with what adapt2 received, where Open MPI changed it
record() {
    local got=""
    [ -n "${EFF[$1]+set}" ] && [ "${EFF[$1]}" != "$2" ] && got=" (got '${EFF[$1]}')"
    ROW[$1]+="  '$2'$got: $3;"
}

# run_shared WHERE V P...: the parameters given all set to V, in the context
# WHERE: a bcast_check run (flat context only: the multi-level parameters are
# read by every collective, reduce_check's reduce and allreduce suffice) and
# a reduce_check run, or (ring context) a ring_check run; each parameter
# judged.
run_shared() {
    local where=$1 v=$2
    shift 2
    local params=("$@") env=() p
    [ -n "${CONTEXT[$where]}" ] && env+=("${CONTEXT[$where]}")
    run_no=$((run_no + 1))
    local dir="$WORK/run$run_no"
    mkdir -p "$dir"
    [ "$where" = multilevel ] && env+=("OMPI_MCA_coll_adapt2_trace=$dir/trace")
    for p in "${params[@]}"; do env+=("OMPI_MCA_coll_adapt2_$p=$v"); done
    local rc1=0 rc2=0 job="" out2="$dir/reduce" prog2=reduce_check
    : >"$dir/bcast"
    if [ "$where" = flat ]; then # side by side: mostly start-up latency
        launch "$dir/bcast" "${env[@]}" -- "${BCAST[@]}" &
        job=$!
    fi
    if [ "$where" = ring ]; then
        out2="$dir/ring" prog2=ring_check
        launch "$out2" "${env[@]}" -- "${RING[@]}" || rc2=$?
    else
        launch "$out2" "${env[@]}" -- "${REDUCE[@]}" || rc2=$?
    fi
    if [ -n "$job" ]; then wait $job || rc1=$?; fi
    local what="$where: ${#params[@]} parameter(s) = '$v'"
    if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then
        if [ ${#params[@]} -gt 1 ]; then # find who: each alone
            echo "     $what: exit $rc1 (bcast_check), $rc2 ($prog2); running each parameter alone"
            for p in "${params[@]}"; do run_shared "$where" "$v" "$p"; done
            return
        fi
        failed=$((failed + 1))
        p=${params[0]}
        record "$p" "$v" "CRASH/ERROR (exit $rc1, $rc2)"
        echo "FAIL coll_adapt2_$p='$v' ($where; adapt2 got '${EFF[$p]}'): bcast_check exit $rc1, $prog2 exit $rc2:"
        tail -n 12 "$dir/bcast" "$out2" | sed 's/^/    /'
        return
    fi
    local ok=0 retry=()
    for p in "${params[@]}"; do
        if judge "$p" "$v" "${EFF[$p]}" "$dir/bcast" "$out2" &&
           { [ "${WHERE[$p]}" != traced ] || traced_written "$dir/trace" "$dir/bcast" "$out2"; }; then
            ok=$((ok + 1))
            record "$p" "$v" "$OUTCOME"
        elif [ ${#params[@]} -gt 1 ]; then
            retry+=("$p")
            echo "     in the shared run: ${WHY:-$OUTCOME}; again alone"
        else
            failed=$((failed + 1))
            record "$p" "$v" "$OUTCOME"
            echo "FAIL ${WHY:-$OUTCOME}"
            grep -hE "coll:adapt2|FAIL" "$dir/bcast" "$out2" | head -5 | sed 's/^/    /'
        fi
    done
    passed=$((passed + ok))
    if [ ${#params[@]} -gt 1 ]; then
        echo "ok   $what: $ok judged right${retry[*]:+, again alone: ${retry[*]}}"
    fi
    for p in "${retry[@]}"; do run_shared "$where" "$v" "$p"; done
}

# traced_written PREFIX OUT...: every rank wrote PREFIX.<rank>.csv, or a
# message names coll_adapt2_trace_max_events or says the trace was not
# written. Sets OUTCOME and WHY when not.
traced_written() {
    local prefix=$1 r
    shift
    grep -qE "coll_adapt2_trace_max_events|could not (write the )?trace" "$@" && return 0
    for ((r = 0; r < NP; ++r)); do
        if [ ! -s "$prefix.$r.csv" ]; then
            OUTCOME="SILENT: no trace written"
            WHY="coll_adapt2_trace_max_events='$v' (adapt2 got '${EFF[trace_max_events]}'): coll_adapt2_trace was set, but rank $r wrote no trace and nothing said why"
            return 1
        fi
    done
}

# ----------------------------------------------------------------- shared runs
declare -A SHARED # context -> the parameters run together there
for p in "${PARAMS[@]}"; do
    [ -z "${ACCEPTS[$p]+set}" ] || [ "${ACCEPTS[$p]}" = own ] && continue
    where=${WHERE[$p]}
    [ "$where" = traced ] && where=multilevel
    SHARED[$where]+="$p "
done
declare -A COERCED # "v:value" -> what adapt2 got instead, per parameter
for v in "${BAD[@]}"; do
    effective "$v"
    for p in "${PARAMS[@]}"; do
        [ "${EFF[$p]}" != "$v" ] && COERCED["v:$v"]+="'${EFF[$p]}' "
    done
    for where in flat multilevel separate ring; do
        [ -n "${SHARED[$where]}" ] || continue
        read -ra members <<<"${SHARED[$where]}"
        run_shared "$where" "$v" "${members[@]}"
    done
done

# Every parameter invalid at once (all but the own ones, at -5): each still
# reported once per process (adapt2 remembers what it reported in a table).
effective -5
env=("OMPI_MCA_coll_adapt2_nodes=block:1" "OMPI_MCA_coll_adapt2_trace=$WORK/all")
all=()
for p in "${PARAMS[@]}"; do
    [ -n "${ACCEPTS[$p]+set}" ] && [ "${ACCEPTS[$p]}" != own ] && [ "$(verdict "$p" -5)" = invalid ] && all+=("$p")
done
for p in "${all[@]}"; do env+=("OMPI_MCA_coll_adapt2_$p=-5"); done
rc=0
# (20000 B: from 8 KiB a blocking root or leaf waits for hellos and reads the grace period)
launch "$WORK/all.out" "${env[@]}" -- "$BIN/reduce_check" --coll allreduce,reduce --ops sum --types int --counts 1,1500,5000 --iters 20 || rc=$?
launch "$WORK/all2.out" "${env[@]}" -- "$BIN/bcast_check" -t int -s 1,5000,20000 --iters 20 || rc=$?
: >"$WORK/all3.out"
for p in "${all[@]}"; do # the ring parameters are read by ring_check's calls only
    if [ "${WHERE[$p]}" = ring ]; then
        launch "$WORK/all3.out" "${env[@]}" -- "${RING[@]}" || rc=$?
        break
    fi
done
missing=()
for p in "${all[@]}"; do judge "$p" -5 -5 "$WORK/all.out" "$WORK/all2.out" "$WORK/all3.out" || missing+=("$WHY"); done
if [ $rc -eq 0 ] && [ ${#missing[@]} -eq 0 ]; then
    passed=$((passed + 1))
    echo "ok   all ${#all[@]} parameters invalid at once: each reported once per process"
else
    failed=$((failed + 1))
    echo "FAIL all ${#all[@]} parameters invalid at once (exit $rc):"
    printf '    %s\n' "${missing[@]}" | head -10
fi

# Invalid values set at run time through MPI_T (bcast_check sets the segment
# size and the windows that way between its calls, and the algorithm, valid:
# Open MPI refuses an MPI_T write outside an MCA enum's values): reported by
# every process, and the broadcasts still right.
rc=0
launch "$WORK/mpit.out" -- "$BIN/bcast_check" -t int,vector -s 1,5000 --segsizes 1000,-5,2000 --windows 0:65,3:3 \
    -a binomial,chain || rc=$?
missing=()
for pv in "bcast_segment_size -5 1048576" "recv_window 0 4" "send_window 65 2"; do
    read -r p v d <<<"$pv"
    n=$(grep -cF "invalid value '$v' for MCA parameter coll_adapt2_$p (" "$WORK/mpit.out" || true)
    np=$(grep -F "invalid value '$v' for MCA parameter coll_adapt2_$p (" "$WORK/mpit.out" | grep -F "; using $d" |
         sed 's/\].*//' | sort -u | wc -l)
    [ "$np" -eq $NP ] || missing+=("coll_adapt2_$p='$v' reported by $np of $NP processes ($n lines)")
done
if [ $rc -eq 0 ] && [ ${#missing[@]} -eq 0 ]; then
    passed=$((passed + 1))
    echo "ok   invalid values set through MPI_T at run time are reported, the broadcasts right"
else
    failed=$((failed + 1))
    echo "FAIL invalid values set through MPI_T (exit $rc):"
    printf '    %s\n' "${missing[@]}"
    tail -n 5 "$WORK/mpit.out" | sed 's/^/    /'
fi

# ----------------------------------------------------------------- own cases
# own_case P V EXPECT CHECK...: one bcast_check run with P=V; EXPECT: ok
# (exit 0) or abort (the job ends non-zero before the timeout, saying a
# collective failed). The reports are judged as for the others.
declare -A OWN_DONE # "p|received value" -> the value given first, and whether it passed
own_case() {
    local p=$1 v=$2 expect=$3 eff=${EFF[$1]-$2}
    shift 3
    local seen=${OWN_DONE["$p|$eff"]-}
    if [ -n "$seen" ]; then # adapt2 receives the same value: one run is enough
        record "$p" "$v" "as '${seen% *}'"
        return "${seen##* }"
    fi
    run_no=$((run_no + 1))
    local out="$WORK/own$run_no" rc=0 why=""
    launch "$out" "OMPI_MCA_coll_adapt2_$p=$v" "$@" -- "${BCAST_OWN[@]}" || rc=$?
    if [ "$expect" = ok ] && [ $rc -ne 0 ]; then
        why="exit $rc"
        OUTCOME="CRASH/ERROR (exit $rc)"
    elif [ "$expect" = abort ] && { [ $rc -eq 0 ] || [ $rc -eq 124 ] ||
                                    ! grep -qE "coll:adapt2: (a collective|MPI_[A-Za-z]+) on .* failed" "$out"; }; then
        why="expected the job to abort with adapt2's failure report, got exit $rc"
        OUTCOME="no abort (exit $rc)"
    elif ! judge "$p" "$v" "$eff" "$out"; then
        why=$WHY
    else
        why=""
        [ "$expect" = abort ] && OUTCOME="aborts the job, as documented"
    fi
    record "$p" "$v" "$OUTCOME"
    OWN_DONE["$p|$eff"]="$v $([ -z "$why" ] && echo 0 || echo 1)"
    if [ -z "$why" ]; then
        passed=$((passed + 1))
        return 0
    fi
    failed=$((failed + 1))
    echo "FAIL coll_adapt2_$p='$v' (adapt2 got '$eff'): $why"
    tail -n 8 "$out" | sed 's/^/    /'
    return 1
}
BCAST_OWN=("$BIN/bcast_check" -t int -s 1,5000)

# priority: any value is valid (0 or less, or below tuned's 30: adapt2 is not
# selected); the broadcasts are still checked.
if [ "${ACCEPTS[priority]}" = own ]; then
    ACCEPTS[priority]=any
    BCAST_OWN=("$BIN/bcast_check" -t int -s 1,5000 --expect none)
    n=0
    for v in "${BAD[@]}"; do effective "$v"; own_case priority "$v" ok && n=$((n + 1)); done
    echo "ok   priority: $n of ${#BAD[@]} values right"
    BCAST_OWN=("$BIN/bcast_check" -t int -s 1,5000)
fi

# inject_send_failure: 0 never; N > 0: the Nth send fails and the job aborts
# (its purpose); a negative count is invalid.
if [ "${ACCEPTS[inject_send_failure]}" = own ]; then
    ACCEPTS[inject_send_failure]=${DEF_RANGE[inject_send_failure]}
    BCAST_OWN=("$BIN/bcast_check" -t int -s 1,5000,20000 --iters 10) # 30 sends and more per rank
    n=0
    for v in "${BAD[@]}"; do
        effective "$v"
        e=${EFF[inject_send_failure]}
        if [[ $e =~ ^[0-9]+$ ]] && [ "$e" -gt 0 ]; then expect=abort; else expect=ok; fi
        own_case inject_send_failure "$v" $expect && n=$((n + 1))
    done
    echo "ok   inject_send_failure: $n of ${#BAD[@]} values right"
    BCAST_OWN=("$BIN/bcast_check" -t int -s 1,5000)
fi

# trace: a file prefix; every rank writes <prefix>.<rank>.csv at MPI_Finalize
# (empty: no trace). A prefix that cannot be written must be reported, naming
# the parameter, and the job still succeeds.
if [ "${ACCEPTS[trace]}" = own ]; then
    ACCEPTS[trace]=any
    n=0
    long=$(printf 'x%.0s' {1..300})
    # a prefix is any string: abc stands for the numbers and junk of BAD
    for v in abc "" "$WORK/no/such/dir/t" "$long"; do
        run_no=$((run_no + 1))
        mkdir -p "$WORK/t$run_no"
        (cd "$WORK/t$run_no" && launch "$WORK/t$run_no.out" "OMPI_MCA_coll_adapt2_trace=$v" -- "${BCAST_OWN[@]}")
        rc=$?
        files=$(cd "$WORK/t$run_no" && ls)
        short=${v:0:40}$([ ${#v} -gt 40 ] && echo "... (${#v} characters)")
        EFF[trace]=$short # a string: Open MPI passes it as it is
        if [ $rc -ne 0 ]; then
            why="exit $rc"
        elif [ -z "$v" ] && [ -n "$files" ]; then
            why="an empty prefix wrote files: $files"
        elif [ -n "$v" ] && [ "$v" = "${v#/}" ] && [ ${#v} -lt 250 ] &&
             { [ ! -s "$WORK/t$run_no/$v.0.csv" ] || [ ! -s "$WORK/t$run_no/$v.1.csv" ]; }; then
            why="no $v.<rank>.csv written (found: ${files:-nothing})"
        elif [ -n "$v" ] && { [ "$v" != "${v#/}" ] || [ ${#v} -ge 250 ]; } &&
             ! grep -q "coll_adapt2_trace" "$WORK/t$run_no.out"; then
            why="the trace cannot be written there, and no message names coll_adapt2_trace: $(grep -i trace "$WORK/t$run_no.out" | head -1)"
        else
            why=""
        fi
        if [ -z "$why" ]; then
            passed=$((passed + 1)); n=$((n + 1))
            if [ -z "$v" ]; then outcome="no trace"
            elif [ "$v" != "${v#/}" ] || [ ${#v} -ge 250 ]; then outcome="cannot be written: reported"
            else outcome=written; fi
            record trace "$short" "$outcome"
        else
            failed=$((failed + 1))
            record trace "$short" "FAIL"
            echo "FAIL coll_adapt2_trace='$short': $why"
            tail -n 5 "$WORK/t$run_no.out" | sed 's/^/    /'
        fi
    done
    echo "ok   trace: $n values right"
fi

# nodes: block:N, cyclic:N (N >= 1) or list:A,B,... (a node number >= 0 per
# world rank); anything else is reported, and Open MPI's view is used.
if [ "${ACCEPTS[nodes]}" = own ]; then
    n=0
    # value and verdict ("either": a huge N puts every rank on one node, or is reported)
    # (numbers and junk without a known prefix all fail the same prefix check: abc stands for them)
    NODE_VALUES=(
        "abc invalid" " valid" "cyclic:2 valid" "list:0,1 valid"
        "block:0 invalid" "block:-3 invalid" "cyclic:0 invalid" "block:1x invalid" "list: invalid"
        "list:0 invalid" "list:0,,1 invalid" "list:0,1x invalid" "list:0,1,junk invalid"
        "list:0,99999999999999999999 invalid" "list:0,4294967296 invalid"
        "block:99999999999999999999 either")
    for entry in "${NODE_VALUES[@]}"; do
        v=${entry% *}
        ACCEPTS[nodes]=fixed:${entry##* }
        EFF[nodes]=$v # a string: Open MPI passes it as it is
        own_case nodes "$v" ok && n=$((n + 1))
    done
    echo "ok   nodes: $n of ${#NODE_VALUES[@]} values right"
fi

# ----------------------------------------------------------------- the table
echo
echo "What Open MPI passed to adapt2 where it differs from the value given (how many parameters):"
for v in "${BAD[@]}"; do
    [ -n "${COERCED[v:$v]}" ] || continue
    printf "  %-22s %s\n" "'$v':" "$(echo "${COERCED[v:$v]}" | tr ' ' '\n' | grep . | sort | uniq -c |
                                    awk '{printf "%s%s x%d", sep, $2, $1; sep=", "}')"
done
echo "What adapt2 did with each value (as given, and what adapt2 got where Open MPI changed it):"
for p in "${PARAMS[@]}"; do echo "  $p:${ROW[$p]}"; done
finish
