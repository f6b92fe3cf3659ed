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
set linetype 2 lc rgb "#D55E00" dt 2 pt 5 ps 0.55*psc lw 1.5               # 2: vermillion, dashed, square
set linetype 3 lc rgb "#009E73" dt 4 pt 9 ps 0.6*psc lw 1.5               # 3: green, dash-dot, triangle
set linetype 4 lc rgb "#E69F00" dt 5 pt 11 ps 0.6*psc lw 1.5              # 4: orange, dash-dot-dot, triangle down
set linetype 5 lc rgb "#000000" dt 3 pt 13 ps 0.6*psc lw 1.5              # 5: black, dotted, diamond
set linetype 6 lc rgb "#882255" dt (8,3,2,3) pt 15 ps 0.6*psc lw 1.5      # 6: wine, long dash-dot, pentagon
set linetype 7 lc rgb "#56B4E9" dt (2,4) pt 3 ps 0.7*psc lw 1.5            # 7: sky blue, sparse dots, star
# Ring and USP coincide wherever USP's best layout is u = 1 (a ring): Ring,
# drawn first, wider and with larger squares, stays visible under USP
set linetype 2 ps 0.8*psc lw 3

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

# ------------------------------------------------------------------- axes
smallfont = sprintf(",%g", fontsize - 1)
set logscale x 2
set logscale y 2
set xrange [gmin / 1.3 : gmax * 1.3]
set yrange [ymin / 1.6 : ymax * 1.6]
set format x "%g"
# a tic at every power of two, labelled at every other one when there are many
nt = 0
do for [k = 0:62] { if (2**k >= ymin / 1.6 && 2**k <= ymax * 1.6) { nt = nt + 1 } }
step = nt > 7 ? 2 : 1
set ytics () scale 0.6, 0.4
j = 0
do for [k = 0:62] { if (2**k >= ymin / 1.6 && 2**k <= ymax * 1.6) { if (j % step == 0) { set ytics add (tok(2**k) 2**k 0) } else { set ytics add ("" 2**k 1) }; j = j + 1 } }
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

plot for [i=1:words(strategies)] data using "gpus":(sel(word(strategies, i))) \
         with linespoints lt sidx(word(strategies, i)) title label(word(strategies, i))
