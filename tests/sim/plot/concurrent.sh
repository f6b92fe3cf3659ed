#!/bin/sh
# concurrent.sh ULYSIM OUTDIR REAL_GNUPLOT: eight `ulysim plot throughput`
# runs with different --seq ranges write the same -o at once. gnuplot
# is a wrapper that reads its data file, waits, reads it again and fails
# when the two differ, then runs the real gnuplot: a run whose image could
# be drawn from another run's data (the CSV renamed into place under it)
# fails. Every run must exit 0, and the final CSV and image must exist.
set -u
U=$1 D=$2 REAL=$3
rm -rf "$D" && mkdir -p "$D" || exit 1
cat >"$D/gp" <<WRAP
#!/bin/sh
data=\$(printf '%s' "\$2" | sed -n "s/.*data='\\([^']*\\)'.*/\\1/p")
a=\$(cat "\$data") || exit 3
sleep 0.4
b=\$(cat "\$data") || exit 3
[ "\$a" = "\$b" ] || { echo "gp: \$data changed while it was being drawn" >&2; exit 4; }
exec "$REAL" "\$@"
WRAP
chmod +x "$D/gp"
pids=""
for s in 32K 64K 128K 256K 512K 1M 2M 4M; do
    GNUPLOT="$D/gp" "$U" plot throughput --gpus 32 --seq 16K..$s -o "$D/p.png" >"$D/out.$s" 2>"$D/err.$s" &
    pids="$pids $!"
done
bad=0
for p in $pids; do wait "$p" || bad=$((bad + 1)); done
cat "$D"/err.* >&2
[ "$bad" = 0 ] || { echo "FAIL: $bad of 8 concurrent runs failed" >&2; exit 1; }
[ -s "$D/p.png" ] && [ -s "$D/p.csv" ] || { echo "FAIL: the pair p.png, p.csv is missing" >&2; exit 1; }
left=$(ls "$D" | grep -c tmp) || true
[ "$left" = 0 ] || { echo "FAIL: temporaries left: $(ls "$D")" >&2; exit 1; }
echo "ok: 8 concurrent plots, each drawn from its own data"
