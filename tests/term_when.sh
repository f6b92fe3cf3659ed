# term_when.sh: sourced by the tests of interrupted runs (tests/sim/cli/out_paths.sh,
# tests/harness/out_paths.sh). term_when PATTERN PID [SIGNAL]: waits (up to
# 60 s) until a file matches PATTERN (the run's temporary), sends PID SIGNAL
# (default TERM) and waits for it; $rc is its exit status, $seen 1 when the
# file appeared.
term_when() {
    i=0 seen=0
    while [ $i -lt 600 ]; do
        # shellcheck disable=SC2086
        if ls $1 >/dev/null 2>&1; then seen=1 && break; fi
        sleep 0.1
        i=$((i + 1))
    done
    kill -"${3:-TERM}" "$2"
    wait "$2"
    rc=$?
}
