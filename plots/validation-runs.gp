# validation-runs.gp: measured against predicted step time of the runs of a
# runs file (log-log), with y = x and a +-10% band; one marker per strategy
# (as in the other ulysim figures).
#
# Made by `ulysim plot validation --runs FILE -o OUT.png|svg|pdf`, which writes
# the data (OUT.csv) and runs:  gnuplot -e "data='OUT.csv'; out='OUT.png'; term='png'" validation-runs.gp
# By hand, every variable is optional:
#   data        CSV written by `ulysim plot validation --runs` [validation-runs.csv]
#               columns used: point, point_side, strategy, predicted_s, measured_s, sidx, label
#   out         output file [validation-runs.<term>]
#   term        png (pngcairo) | svg | pdf (pdfcairo) [pdf]
#   width, height   size in inches [3.5 x 3.8: one paper column]
#   fontsize    points [9]; dpi: PNG resolution [300]
#   band        the relative error band drawn around y = x [0.1]
#   subtitle    a line above the plot naming the runs ["": none]
# (`strategies` is ignored: the strategies drawn are the data's.)

if (!exists("data")) data = "validation-runs.csv"
if (!exists("term")) term = "pdf"
if (!exists("out")) out = "validation-runs." . term
if (!exists("width")) width = 3.5
if (!exists("height")) height = 3.8
if (!exists("fontsize")) fontsize = 9
if (!exists("dpi")) dpi = 300
if (!exists("band")) band = 0.1
if (!exists("subtitle")) subtitle = ""
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
psc = (term eq "png") ? dpi / 96.0 : 1.0

# one style per strategy, linetype i for the strategy whose sidx is i: the
# same colours and point types as every ulysim figure
set linetype 1 lc rgb "#0072B2" pt 7 ps 0.6*psc lw 1.5
set linetype 2 lc rgb "#D55E00" pt 5 ps 0.55*psc lw 1.5
set linetype 3 lc rgb "#009E73" pt 9 ps 0.6*psc lw 1.5
set linetype 4 lc rgb "#E69F00" pt 11 ps 0.6*psc lw 1.5
set linetype 5 lc rgb "#000000" pt 13 ps 0.6*psc lw 1.5
set linetype 6 lc rgb "#882255" pt 15 ps 0.6*psc lw 1.5
set linetype 7 lc rgb "#56B4E9" pt 3 ps 0.7*psc lw 1.5

set datafile separator comma
set datafile columnheaders
array NAME[64]
array LBL[64]
do for [sj=1:64] { NAME[sj] = ""; LBL[sj] = "" }
stats data using (sk = int(column("sidx")), NAME[sk] = strcol("strategy"), LBL[sk] = strcol("label"), 0) nooutput
strategies = ""
do for [sj=1:64] { if (NAME[sj] ne "") { strategies = strategies . " " . NAME[sj] } }
sidx(s) = sum [sj=1:64] (NAME[sj] eq s ? sj : 0)
label(s) = sidx(s) > 0 ? LBL[sidx(s)] : s
of(s) = strcol("strategy") eq s ? column("measured_s") : NaN
stats data using "predicted_s" nooutput
lo = STATS_min
hi = STATS_max
stats data using "measured_s" nooutput
lo = (STATS_min < lo ? STATS_min : lo) / 2
hi = (STATS_max > hi ? STATS_max : hi) * 2
dur(x) = x >= 1 ? sprintf("%g s", x) : x >= 1e-3 ? sprintf("%g ms", x * 1e3) : sprintf("%g µs", x * 1e6)

smallfont = sprintf(",%g", fontsize - 1)
set logscale xy 10
set xrange [lo : hi]
set yrange [lo : hi]
set size ratio -1
set xtics ()
set ytics ()
# a labelled tick at every decade; where the runs span fewer than three, at
# 1, 2 and 5 of each decade too, so that each axis has a scale to read
nd = 0
do for [k = -9:6] { if (10.0**k >= lo && 10.0**k <= hi) { nd = nd + 1 } }
do for [k = -10:6] { do for [m in "1 2 5"] { v = m * 10.0**k; \
    if (v >= lo && v <= hi && (m == 1 || nd < 3)) { set xtics add (dur(v) v); set ytics add (dur(v) v) } } }
set mxtics 10
set mytics 10
set xtics nomirror out scale 0.6, 0.3 font smallfont
set ytics nomirror out scale 0.6, 0.3 font smallfont
set xlabel "predicted step time"
set ylabel "measured step time" offset 0.5,0
set grid xtics ytics lc rgb "#d0d0d0" lw 0.5 dt 1
set border 3 lw 0.8
if (subtitle ne "") set label 99 subtitle at screen 0.5, screen 0.975 center noenhanced font smallfont
set tmargin (subtitle ne "" ? 2.2 : 1)
set samples 200
set key outside below center vertical maxrows 4 reverse Left width 0 height 0.4 samplen 1.6 spacing 1.0 font smallfont

plot '+' using 1:($1 * (1 - band)):($1 * (1 + band)) with filledcurves fc rgb "#e4e4e4" \
         title sprintf("±%.0f%%", band * 100), \
     x with lines lc rgb "#000000" lw 1 dt 2 title "y = x", \
     for [i=1:words(strategies)] data using "predicted_s":(of(word(strategies, i))) \
         with points lt sidx(word(strategies, i)) ps 0.9*psc title label(word(strategies, i)), \
     data using "predicted_s":"measured_s":(column("point_side") > 0 ? strcol("point") : "") with labels left \
         offset 0.8, -0.6 font smallfont noenhanced notitle, \
     data using "predicted_s":"measured_s":(column("point_side") < 0 ? strcol("point") : "") with labels right \
         offset -0.8, 0.6 font smallfont noenhanced notitle
