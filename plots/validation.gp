# validation.gp: measured against predicted time of every operation of one or
# more ulyharness traces (log-log), with y = x and a +-20% band. One marker
# per strategy (as in the other ulysim figures): filled for communication,
# open for compute (GEMM, attention, elementwise).
#
# Made by `ulysim plot validation TRACE... -o FILE.png|svg|pdf`, which writes
# the data (FILE.csv) and runs:  gnuplot -e "data='FILE.csv'; out='FILE.png'; term='png'" validation.gp
# By hand, every variable is optional:
#   data        CSV written by `ulysim plot validation` [validation.csv]
#               columns used: strategy, kind, predicted_s, measured_s, sidx, label
#   out         output file [validation.<term>]
#   term        png (pngcairo) | svg | pdf (pdfcairo) [pdf]
#   width, height   size in inches [3.5 x 3.8: one paper column]
#   fontsize    points [9]; dpi: PNG resolution [300]
#   band        the relative error band drawn around y = x [0.2]
#   strategies  space-separated, in legend order [every strategy in the data, by sidx]
#   subtitle    a line above the plot naming the configuration ["": none]

# ------------------------------------------------------------------ output
if (!exists("data")) data = "validation.csv"
if (!exists("term")) term = "pdf"
if (!exists("out")) out = "validation." . term
if (!exists("width")) width = 3.5
if (!exists("height")) height = 3.8
if (!exists("fontsize")) fontsize = 9
if (!exists("dpi")) dpi = 300
if (!exists("band")) band = 0.2
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
# point sizes are absolute: scale them with the PNG resolution like the fonts
psc = (term eq "png") ? dpi / 96.0 : 1.0


# ------------------------------------------------- one style per strategy
# colour (Okabe-Ito), dash type and point type, so that lines stay distinct
# in greyscale; linetype i for the strategy whose sidx (CSV column) is i: the
# same in every ulysim figure
set linetype 1 lc rgb "#0072B2" dt 1 pt 7 ps 0.6*psc lw 1.5               # 1: blue, solid, circle
set linetype 2 lc rgb "#D55E00" dt 2 pt 5 ps 0.55*psc lw 1.5               # 2: vermillion, dashed, square
set linetype 3 lc rgb "#009E73" dt 4 pt 9 ps 0.6*psc lw 1.5               # 3: green, dash-dot, triangle
set linetype 4 lc rgb "#E69F00" dt 5 pt 11 ps 0.6*psc lw 1.5              # 4: orange, dash-dot-dot, triangle down
set linetype 5 lc rgb "#000000" dt 3 pt 13 ps 0.6*psc lw 1.5              # 5: black, dotted, diamond
set linetype 6 lc rgb "#882255" dt (8,3,2,3) pt 15 ps 0.6*psc lw 1.5      # 6: wine, long dash-dot, pentagon
set linetype 7 lc rgb "#56B4E9" dt (2,4) pt 3 ps 0.7*psc lw 1.5            # 7: sky blue, sparse dots, star

# the open version of each strategy's point type: compute operations
hollow(i) = (i == 1) ? 6 : (i == 2) ? 4 : (i == 3) ? 8 : (i == 4) ? 10 : (i == 5) ? 12 : (i == 6) ? 14 : 1

# ------------------------------------------------------------------- data
set datafile separator comma
set datafile columnheaders
# the strategies in the data, by name: sidx (the position in ulysim's
# strategy registry, from 1: the line style) and the legend label, as the
# CSV's sidx and label columns give them
array NAME[64]
array LBL[64]
do for [sj=1:64] { NAME[sj] = ""; LBL[sj] = "" }
stats data using (sk = int(column("sidx")), NAME[sk] = strcol("strategy"), LBL[sk] = strcol("label"), 0) nooutput
sidx(s) = sum [sj=1:64] (NAME[sj] eq s ? sj : 0)
label(s) = sidx(s) > 0 ? LBL[sidx(s)] : s
if (!exists("strategies")) { strategies = ""; do for [sj=1:64] { if (NAME[sj] ne "") { strategies = strategies . " " . NAME[sj] } } }
comm(s) = (strcol("strategy") eq s && strcol("kind") eq "comm") ? column("measured_s") : NaN
comp(s) = (strcol("strategy") eq s && strcol("kind") ne "comm") ? column("measured_s") : NaN
stats data using "predicted_s" nooutput
lo = STATS_min
hi = STATS_max
stats data using "measured_s" nooutput
lo = STATS_min < lo ? STATS_min : lo
hi = STATS_max > hi ? STATS_max : hi
lo = lo / 2.5
hi = hi * 2.5
# seconds, written the short way: 1e-05 -> "10 µs"
dur(x) = x >= 1 ? sprintf("%g s", x) : x >= 1e-3 ? sprintf("%g ms", x * 1e3) : sprintf("%g µs", x * 1e6)

# ------------------------------------------------------------------- axes
smallfont = sprintf(",%g", fontsize - 1)
set logscale xy 10
set xrange [lo : hi]
set yrange [lo : hi]
set size ratio -1
set xtics ()
set ytics ()
# every decade labelled on y; on x too while the labels fit side by side
# (five decades at one paper column), else every other one, the rest ticked
nd = 0
do for [k = -9:4] { if (10.0**k >= lo && 10.0**k <= hi) { nd = nd + 1 } }
xstep = nd > 5 ? 2 : 1
j = 0
do for [k = -9:4] { if (10.0**k >= lo && 10.0**k <= hi) { \
    if (j % xstep == 0) { set xtics add (dur(10.0**k) 10.0**k 0) } else { set xtics add ("" 10.0**k 0) }; \
    set ytics add (dur(10.0**k) 10.0**k); j = j + 1 } }
set mxtics 10
set mytics 10
set xtics nomirror out scale 0.6, 0.3 font smallfont
set ytics nomirror out scale 0.6, 0.3 font smallfont
set xlabel "predicted time per operation"
set ylabel "measured time per operation" offset 0.5,0
set grid xtics ytics lc rgb "#d0d0d0" lw 0.5 dt 1
set border 3 lw 0.8
if (subtitle ne "") set label 99 subtitle at screen 0.5, screen 0.975 center noenhanced font smallfont
set tmargin (subtitle ne "" ? 2.2 : 1)
set samples 200
# legend under the axes, covering no data
set key outside below center vertical maxrows 4 reverse Left width 0 height 0.4 samplen 1.6 spacing 1.0 font smallfont

plot '+' using 1:($1 * (1 - band)):($1 * (1 + band)) with filledcurves fc rgb "#e4e4e4" \
         title sprintf("±%.0f%%", band * 100), \
     x with lines lc rgb "#000000" lw 1 dt 2 title "y = x", \
     for [i=1:words(strategies)] data using "predicted_s":(comm(word(strategies, i))) \
         with points lt sidx(word(strategies, i)) ps 0.75*psc title label(word(strategies, i)), \
     for [i=1:words(strategies)] data using "predicted_s":(comp(word(strategies, i))) \
         with points lt sidx(word(strategies, i)) pt hollow(sidx(word(strategies, i))) ps 0.75*psc lw 0.8 notitle, \
     NaN with points lc rgb "#000000" pt 7 ps 0.75*psc title "communication", \
     NaN with points lc rgb "#000000" pt 6 ps 0.75*psc lw 0.8 title "compute"
