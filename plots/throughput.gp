# throughput.gp: model TFLOP/s per GPU against the sequence length, one line
# per strategy (spread over all GPUs, or at its best layout) on one model and
# cluster, in the style of the Ulysses paper's Figures 4-5. Points where the
# strategy runs out of memory are drawn open (its marker, hollow, the same size)
# at the TFLOP/s the closest layout would reach if it fitted, not joined to
# the line.
#
# Made by `ulysim plot throughput ... -o FILE.png|svg|pdf`, which writes the
# data (FILE.csv) and runs:  gnuplot -e "data='FILE.csv'; out='FILE.png'; term='png'" throughput.gp
# By hand, every variable is optional:
#   data        CSV written by `ulysim plot throughput` [throughput.csv]
#               columns used: strategy, seq, fits, oom, tflops_per_gpu, sidx, label
#   out         output file [throughput.<term>]
#   term        png (pngcairo) | svg | pdf (pdfcairo) [pdf]
#   width, height   size in inches [3.5 x 3.3: one paper column]
#   fontsize    points [9]; dpi: PNG resolution [300]
#   strategies  space-separated, in legend order [every strategy in the data, by sidx]
#   subtitle    a line above the plot naming the configuration ["": none]

# ------------------------------------------------------------------ output
if (!exists("data")) data = "throughput.csv"
if (!exists("term")) term = "pdf"
if (!exists("out")) out = "throughput." . term
if (!exists("width")) width = 3.5
if (!exists("height")) height = 3.3
if (!exists("fontsize")) fontsize = 9
if (!exists("dpi")) dpi = 300
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
set linetype 2 lc rgb "#D55E00" dt 2 pt 5 ps 0.6*psc lw 1.5               # 2: vermillion, dashed, square
set linetype 3 lc rgb "#009E73" dt 4 pt 9 ps 0.6*psc lw 1.5               # 3: green, dash-dot, triangle
set linetype 4 lc rgb "#E69F00" dt 5 pt 11 ps 0.6*psc lw 1.5              # 4: orange, dash-dot-dot, triangle down
set linetype 5 lc rgb "#000000" dt 3 pt 13 ps 0.6*psc lw 1.5              # 5: black, dotted, diamond
set linetype 6 lc rgb "#882255" dt (8,3,2,3) pt 15 ps 0.6*psc lw 1.5      # 6: wine, long dash-dot, pentagon
set linetype 7 lc rgb "#56B4E9" dt (2,4) pt 3 ps 0.6*psc lw 1.5            # 7: sky blue, sparse dots, star

# the open version of each strategy's point type, for out-of-memory points
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
# 1048576 -> "1M", 131072 -> "128K"
tok(n) = n >= 2**30 && n % 2**30 == 0 ? sprintf("%dG", n / 2**30) : \
         n >= 2**20 && n % 2**20 == 0 ? sprintf("%dM", n / 2**20) : \
         n >= 2**10 && n % 2**10 == 0 ? sprintf("%dK", n / 2**10) : sprintf("%d", n)
# TFLOP/s of strategy s where it fits (ok = 1) or where only memory stops it (ok = 0)
fit(s) = (strcol("strategy") eq s && column("fits") == 1) ? column("tflops_per_gpu") : NaN
oom(s) = (strcol("strategy") eq s && column("oom") == 1) ? column("tflops_per_gpu") : NaN
stats data using "seq" nooutput
smin = STATS_min
smax = STATS_max
stats data using "tflops_per_gpu" nooutput
ymax = STATS_max

XLO = smin / 1.4
XHI = smax * 1.4
YLO = 0
YHI = ymax
# Points of several strategies that would lie on one another (same x, y
# within 3.5% of the axis height) are set apart sideways, in sidx order
# around their x, a factor 2^0.16 (a sixth of the gap between two x values
# that double) apart: each marker stays visible, none strays far from its x,
# and a point with no neighbour stays where it is.
# DY[x slot * 8 + sidx]: each strategy's y at each x (slots of a quarter
# factor of 2), filled by dodge_fill before the plot.
array DY[64 * 8 + 8]
do for [q = 1:|DY|] { DY[q] = NaN }
# slots 1..63: slot 0 would make DY's index 0 for a strategy of no row
# (sidx 0), out of gnuplot's 1-based array, at 64K tokens (16 x 4 % 64 = 0)
xslot(x) = int(floor(log(x) / log(2) * 4 + 0.5)) % 63 + 1
near(i, s, t) = (t != s && DY[i * 8 + t] == DY[i * 8 + t] && abs(DY[i * 8 + t] - DY[i * 8 + s]) < 0.035 * (YHI - YLO)) ? 1 : 0
# near2: near, or near through a third (a chain of three is one group)
near2(i, s, t) = t != s && (near(i, s, t) || sum [u = 1:8] (near(i, s, u) * near(i, u, t)) > 0) ? 1 : 0
dodge(x, s) = (dq_i = xslot(x), dq_n = sum [t = 1:8] near2(dq_i, s, t), \
               dq_r = sum [t = 1:8] (t < s ? near2(dq_i, s, t) : 0), x * 2**(0.16 * (dq_r - dq_n / 2.0)))
stats data using (DY[xslot(column("seq")) * 8 + int(column("sidx"))] = column("tflops_per_gpu"), 0) nooutput

# ------------------------------------------------------------------- axes
smallfont = sprintf(",%g", fontsize - 1)
set logscale x 2
set xrange [smin / 1.4 : smax * 1.4]
# from 0 to the first labelled tick at or above the highest point
set yrange [0 : *]
set autoscale ymax
# a tic at every power of two, labelled at every other one when there are many
nt = 0
do for [k = 0:40] { if (2**k >= smin && 2**k <= smax) { nt = nt + 1 } }
step = nt > 6 ? 2 : 1
set xtics () scale 0.6, 0.4
j = 0
do for [k = 0:40] { if (2**k >= smin && 2**k <= smax) { if (j % step == 0) { set xtics add (tok(2**k) 2**k 0) } else { set xtics add ("" 2**k 1) }; j = j + 1 } }
set xlabel "sequence length (tokens)"
set ylabel "TFLOP/s per GPU" offset 1,0
set grid xtics ytics lc rgb "#d0d0d0" lw 0.5 dt 1
set border 3 lw 0.8
set tics nomirror out scale 0.6
if (subtitle ne "") set label 99 subtitle at screen 0.5, screen 0.975 center noenhanced font smallfont
set tmargin (subtitle ne "" ? 2.2 : 1)
# legend under the axes, covering no data
set key outside below center vertical maxrows 4 reverse Left width 1 height 0.6 samplen 2.2 spacing 1.0 font smallfont

plot for [i=1:words(strategies)] data using (dodge(column("seq"), sidx(word(strategies, i)))):(fit(word(strategies, i))) \
         with linespoints lt sidx(word(strategies, i)) title label(word(strategies, i)), \
     for [i=1:words(strategies)] data using (dodge(column("seq"), sidx(word(strategies, i)))):(oom(word(strategies, i))) \
         with points lt sidx(word(strategies, i)) pt hollow(sidx(word(strategies, i))) ps 0.6*psc lw 0.8 notitle, \
     NaN with points lc rgb "#000000" pt 6 ps 0.6*psc lw 0.8 title "out of memory"
