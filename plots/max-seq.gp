# max-seq.gp: the longest sequence each strategy fits in memory
# against the GPU count (each at its best layout there), in the style of the
# RSA paper's capacity comparison. Log axes.
#
# Made by `ulysim plot max-seq ... -o FILE.png|svg|pdf`, which writes the
# data (FILE.csv) and runs:  gnuplot -e "data='FILE.csv'; out='FILE.png'; term='png'" max-seq.gp
# By hand, every variable is optional:
#   data        CSV written by `ulysim plot max-seq` [max-seq.csv]
#               columns used: strategy, gpus, max_seq, sidx, label
#   out         output file [max-seq.<term>]
#   term        png (pngcairo) | svg | pdf (pdfcairo) [pdf]
#   width, height   size in inches [3.5 x 3.3: one paper column]
#   fontsize    points [9]; dpi: PNG resolution [300]
#   strategies  space-separated, in legend order [every strategy in the data, by sidx]
#   subtitle    a line above the plot naming the configuration ["": none]

# ------------------------------------------------------------------ output
if (!exists("data")) data = "max-seq.csv"
if (!exists("term")) term = "pdf"
if (!exists("out")) out = "max-seq." . term
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
sel(s) = (strcol("strategy") eq s) ? column("max_seq") : NaN
stats data using "gpus" nooutput
gmin = STATS_min
gmax = STATS_max
stats data using "max_seq" nooutput
ymin = STATS_min
ymax = STATS_max

XLO = gmin / 1.3
XHI = gmax * 1.3
YLO = ymin
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
xslot(x) = int(floor(log(x) / log(2) * 4 + 0.5)) % 64
near(i, s, t) = (t != s && DY[i * 8 + t] == DY[i * 8 + t] && abs(log(DY[i * 8 + t] / DY[i * 8 + s])) < 0.035 * log(YHI / YLO)) ? 1 : 0
# near2: near, or near through a third (a chain of three is one group)
near2(i, s, t) = t != s && (near(i, s, t) || sum [u = 1:8] (near(i, s, u) * near(i, u, t)) > 0) ? 1 : 0
dodge(x, s) = (dq_i = xslot(x), dq_n = sum [t = 1:8] near2(dq_i, s, t), \
               dq_r = sum [t = 1:8] (t < s ? near2(dq_i, s, t) : 0), x * 2**(0.16 * (dq_r - dq_n / 2.0)))
stats data using (1 ? (DY[xslot(column("gpus")) * 8 + int(column("sidx"))] = column("max_seq"), 0) : 0) nooutput

# ------------------------------------------------------------------- axes
smallfont = sprintf(",%g", fontsize - 1)
set logscale x 2
set logscale y 2
set xrange [gmin / 1.3 : gmax * 1.3]
set format x "%g"
# a tic at every power of two, labelled at every other one when there are
# many; the range runs from the labelled tick at or below the lowest point to
# the one at or above the highest, so that every point lies between labels
klo = floor(log(ymin) / log(2) + 1e-9)
khi = ceil(log(ymax) / log(2) - 1e-9)
step = khi - klo > 7 ? 2 : 1
khi = klo + step * ceil((khi - klo) / (1.0 * step))
set yrange [2**klo / 1.15 : 2**khi * 1.15]
set ytics () scale 0.6, 0.4
do for [k = klo:khi] { if ((k - klo) % step == 0) { set ytics add (tok(2**k) 2**k 0) } else { set ytics add ("" 2**k 1) } }
set xlabel "GPUs"
set ylabel "longest sequence that fits (tokens)" offset 0.5,0
set grid xtics ytics lc rgb "#d0d0d0" lw 0.5 dt 1
set border 3 lw 0.8
set tics nomirror out scale 0.6
if (subtitle ne "") set label 99 subtitle at screen 0.5, screen 0.975 center noenhanced font smallfont
set tmargin (subtitle ne "" ? 2.2 : 1)
# legend under the axes, covering no data
# two columns: three clip the last entry at one paper column
set key outside below center vertical maxrows 4 reverse Left width 1 height 0.6 samplen 2.2 spacing 1.0 font smallfont

plot for [i=1:words(strategies)] data using (dodge(column("gpus"), sidx(word(strategies, i)))):(sel(word(strategies, i))) \
         with linespoints lt sidx(word(strategies, i)) title label(word(strategies, i))
