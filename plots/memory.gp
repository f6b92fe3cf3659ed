# memory.gp: memory per GPU by term (weights, gradients, optimizer states,
# activations, ...), stacked, one bar per strategy at its best layout (or
# spread over all GPUs), drawn across so that the names read, with the
# usable HBM as a dashed line. Bars longer than the axis are cut and
# labelled with their total.
#
# Made by `ulysim plot memory ... -o FILE.png|svg|pdf`, which writes the data
# (FILE.csv) and runs:  gnuplot -e "data='FILE.csv'; out='FILE.png'; term='png'" memory.gp
# By hand, every variable is optional:
#   data        CSV written by `ulysim plot memory` [memory.csv]
#               columns used: label_short (the strategy's bar name), layout,
#               <term>_bytes, total_bytes, capacity_bytes
#   out         output file [memory.<term>]
#   term        png (pngcairo) | svg | pdf (pdfcairo) [pdf]
#   width, height   size in inches [3.5 x 3.7: one paper column]
#   fontsize    points [9]; dpi: PNG resolution [300]
#   ycap        the axis ends at most at ycap x the HBM [2]
#   subtitle    a line above the plot naming the configuration ["": none]

# ------------------------------------------------------------------ output
if (!exists("data")) data = "memory.csv"
if (!exists("term")) term = "pdf"
if (!exists("out")) out = "memory." . term
if (!exists("width")) width = 3.5
if (!exists("height")) height = 3.7
if (!exists("fontsize")) fontsize = 9
if (!exists("dpi")) dpi = 300
if (!exists("ycap")) ycap = 2
if (!exists("subtitle")) subtitle = ""
# the svg terminal sets the two lines of a bar's label 1.5 em apart (cairo's
# terminals about 1.2): there the figure is as tall as its labels need, so
# that one bar's second line does not run into the next bar's first
if (term eq "svg") {
    set datafile separator comma
    set datafile columnheaders
    stats data using 0 nooutput
    need = 1.9 + STATS_records * 2 * 1.5 * (fontsize - 1) / 72.0
    height = height > need ? height : need
}
fmt_png = 'set terminal pngcairo enhanced size %d,%d font "Sans,%g" fontscale %g linewidth %g'
fmt_svg = 'set terminal svg enhanced size %g,%g font "Sans,%g" linewidth 1 background "white"'
fmt_pdf = 'set terminal pdfcairo enhanced size %gin,%gin font "Sans,%g" linewidth 2'
if (term eq "png") {
    eval sprintf(fmt_png, width*dpi, height*dpi, fontsize, dpi/96.0, dpi/72.0)
} else {
    if (term eq "svg") { eval sprintf(fmt_svg, width*72, height*72, fontsize) } \
    else { eval sprintf(fmt_pdf, width, height, fontsize) }
}
set output out
# point sizes are absolute: scale them with the PNG resolution like the fonts
psc = (term eq "png") ? dpi / 96.0 : 1.0


# ------------------------------------------------------------ the terms
# column prefix, legend text, colour and fill: solid fills of different
# lightness alternate with hatches so that neighbours differ in greyscale
array T[10] = ["weights", "grads", "optimizer", "activations", "working", \
               "scores", "comm_buffers", "zero3_gather", "logits", "reserved"]
array L[10] = ["weights", "gradients", "optimizer states", "activations", "working (1 layer)", \
               "attention scores", "comm. buffers", "ZeRO-3 gather", "logits", "reserved"]
array C[10] = ["#08519c", "#08519c", "#6baed6", "#fd8d3c", "#d94801", \
               "#7f2704", "#238b45", "#a1d99b", "#6a51a3", "#bdbdbd"]
# fill pattern: 3 solid, 4 and 6 hatched /, 5 hatched \, 1 crosshatched
array F[10] = [3, 4, 3, 3, 5, 3, 1, 3, 6, 3]

# ------------------------------------------------------------------- data
set datafile separator comma
set datafile columnheaders
GiB = 2.0**30
stats data using "capacity_bytes" nooutput
hbm = STATS_max / GiB
stats data using "total_bytes" nooutput
tmax = STATS_max / GiB
nbars = STATS_records
xtop = (tmax < ycap * hbm ? tmax : ycap * hbm) * 1.08
if (xtop < hbm * 1.12) xtop = hbm * 1.12
# which terms are non-zero anywhere: only those get a legend entry
array NZ[10]
do for [i=1:10] { stats data using (column(T[i] . "_bytes")) nooutput; NZ[i] = STATS_max > 0 }
# GiB of the first i terms of this row: where term i ends
upto(i) = (i < 1) ? 0 : sum [k=1:i] column(T[k] . "_bytes") / GiB
clip(x) = x < xtop ? x : xtop
half = 0.32   # half the bar thickness, in rows

# ------------------------------------------------------------------- axes
# about four tics whatever the range: a step of 1, 2 or 5 x 10^k
tic_step(r) = (r / 10**floor(log10(r)) <= 2) ? 10**floor(log10(r)) / 2 : \
              (r / 10**floor(log10(r)) <= 5) ? 10**floor(log10(r)) : 2 * 10**floor(log10(r))
# horizontal bars, first strategy on top, so that the names read across
smallfont = sprintf(",%g", fontsize - 1)
set xrange [0 : xtop]
set yrange [nbars - 0.5 : -0.5]
set xlabel "memory per GPU (GiB)"
set ytics scale 0 font smallfont
set xtics tic_step(xtop) nomirror out scale 0.6 font smallfont
set grid xtics lc rgb "#d0d0d0" lw 0.5 dt 1
set border 3 lw 0.8
set style fill solid 1.0 border rgb "#000000"
set style textbox opaque noborder margins 0.5, 0.5
if (subtitle ne "") set label 99 subtitle at screen 0.5, screen 0.975 center noenhanced font smallfont
set tmargin (subtitle ne "" ? 2.2 : 1)
# the HBM: a dashed line across the bars, named in the legend
set arrow 1 from first hbm, graph 0 to first hbm, graph 1 nohead lc rgb "#000000" lw 1.2 dt 2 front
# legend under the axes, covering no data
set key outside below center vertical maxrows 6 reverse Left width 1 height 0.6 samplen 2.6 spacing 1.0 font smallfont

# one rectangle per term and row (x from the end of the previous term to the
# end of this one), then the totals of bars cut by the axis
plot for [i=1:10] data using (clip(upto(i))):0:(clip(upto(i-1))):(clip(upto(i))):($0 - half):($0 + half): \
         ytic(strcol("label_short") . "\n" . strcol("layout")) \
         with boxxyerror lc rgb C[i] lw 0.5 fs pattern F[i] border rgb "#000000" title (NZ[i] ? L[i] : ""), \
     NaN with lines lc rgb "#000000" lw 1.2 dt 2 title sprintf("HBM, %.0f GiB", hbm), \
     data using (xtop):0:(column("total_bytes") / GiB > xtop ? sprintf("%.0f GiB ", column("total_bytes") / GiB) : "") \
         with labels right boxed font smallfont noenhanced tc rgb "#000000" notitle
