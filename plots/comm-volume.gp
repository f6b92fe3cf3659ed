# comm-volume.gp: communication bytes sent per GPU per layer against the GPU
# count, for each strategy spread over all GPUs; (a) the sequence length N
# fixed, (b) N growing with the GPUs (N/P fixed). Log axes. The Ulysses
# paper's argument: all-to-all volume per GPU falls as 1/P while ring and
# Megatron-SP volumes do not, so with N/P fixed Ulysses stays flat.
#
# Made by `ulysim plot comm-volume ... -o FILE.png|svg|pdf`, which writes the
# data (FILE.csv) and runs:  gnuplot -e "data='FILE.csv'; out='FILE.png'; term='png'" comm-volume.gp
# By hand, every variable is optional:
#   data        CSV written by `ulysim plot comm-volume` [comm-volume.csv]
#               columns used: panel (fixed|scaled), strategy, gpus, seq, comm_<phase>_bytes, sidx, label,
#               same_as_label
#   out         output file [comm-volume.<term>]
#   term        png (pngcairo) | svg | pdf (pdfcairo) [pdf]
#   width, height   size in inches [3.5 x 4.8: one paper column]
#   fontsize    points [9]; dpi: PNG resolution [300]
#   phase       total (fwd + bwd) | fwd | bwd [total]
#   strategies  space-separated, in legend order [every strategy in the data, by sidx]
#   subtitle    a line above the plot naming the configuration ["": none]

# ------------------------------------------------------------------ output
if (!exists("data")) data = "comm-volume.csv"
if (!exists("term")) term = "pdf"
if (!exists("out")) out = "comm-volume." . term
if (!exists("width")) width = 3.5
if (!exists("height")) height = 4.8
if (!exists("fontsize")) fontsize = 9
if (!exists("dpi")) dpi = 300
if (!exists("phase")) phase = "total"
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
array SAME[64]
do for [sj=1:64] { NAME[sj] = ""; LBL[sj] = ""; SAME[sj] = "" }
stats data using (sk = int(column("sidx")), NAME[sk] = strcol("strategy"), LBL[sk] = strcol("label"), \
                  SAME[sk] = strcol("same_as_label"), 0) nooutput
sidx(s) = sum [sj=1:64] (NAME[sj] eq s ? sj : 0)
# a strategy whose bytes equal this one's at every point is drawn once, as
# this one: the legend names both ("Ring = All-gather CP")
label(s) = sidx(s) > 0 ? LBL[sidx(s)] . (SAME[sidx(s)] ne "" ? " = " . SAME[sidx(s)] : "") : s
if (!exists("strategies")) { strategies = ""; do for [sj=1:64] { if (NAME[sj] ne "") { strategies = strategies . " " . NAME[sj] } } }
ycol = "comm_" . phase . "_bytes"
# the value of strategy s in panel p, in GiB; NaN elsewhere, and where
# nothing is sent (1 GPU), which a log axis cannot show
sel(p, s) = (strcol("panel") eq p && strcol("strategy") eq s && column(ycol) > 0) ? column(ycol) / 2.0**30 : NaN
# 1048576 -> "1M", 131072 -> "128K"
tok(n) = n >= 2**30 && n % 2**30 == 0 ? sprintf("%dG", n / 2**30) : \
         n >= 2**20 && n % 2**20 == 0 ? sprintf("%dM", n / 2**20) : \
         n >= 2**10 && n % 2**10 == 0 ? sprintf("%dK", n / 2**10) : sprintf("%d", n)
stats data using (strcol("panel") eq "fixed" ? column("seq") : NaN) nooutput
n_fixed = int(STATS_max)
stats data using (strcol("panel") eq "scaled" ? column("seq") / column("gpus") : NaN) nooutput
n_per_gpu = int(STATS_max)
stats data using (strcol("panel") eq "fixed" && column(ycol) > 0 ? column(ycol) / 2.0**30 : NaN) nooutput
# each panel's range: the decades around its points, every point between
# two labelled ticks (10^k)
ya = 10.0**floor(log10(STATS_min) + 1e-9)
yb = 10.0**ceil(log10(STATS_max) - 1e-9)
yb = yb > ya ? yb : ya * 10
stats data using (strcol("panel") eq "scaled" && column(ycol) > 0 ? column(ycol) / 2.0**30 : NaN) nooutput
yc = 10.0**floor(log10(STATS_min) + 1e-9)
yd = 10.0**ceil(log10(STATS_max) - 1e-9)
yd = yd > yc ? yd : yc * 10
stats data using "gpus" nooutput
gmin = STATS_min
gmax = STATS_max

# Points of several strategies that would lie on one another (same x, y
# within 3.5% of the panel's height) are set apart sideways, in sidx order
# around their x, a factor 2^0.16 (a sixth of the gap between two x values
# that double) apart: each marker stays visible, none strays far from its x,
# and a point with no neighbour stays where it is.
# DY[(panel * 64 + x slot) * 8 + sidx]: each strategy's y at each x (slots of
# a quarter factor of 2) in each panel (0 fixed, 1 scaled), filled before the
# plot.
array DY[2 * 64 * 8 + 8]
do for [q = 1:|DY|] { DY[q] = NaN }
XLO = gmin / 1.3
XHI = gmax * 1.3
xslot(x, p) = p * 64 + int(floor(log(x) / log(2) * 4 + 0.5)) % 64
near(i, s, t, span) = (t != s && DY[i * 8 + t] == DY[i * 8 + t] && abs(log(DY[i * 8 + t] / DY[i * 8 + s])) < 0.035 * span) ? 1 : 0
# near2: near, or near through a third (a chain of three is one group)
near2(i, s, t, span) = t != s && (near(i, s, t, span) || sum [u = 1:8] (near(i, s, u, span) * near(i, u, t, span)) > 0) ? 1 : 0
dodge(x, s, p, span) = (dq_i = xslot(x, p), dq_n = sum [t = 1:8] near2(dq_i, s, t, span), \
                        dq_r = sum [t = 1:8] (t < s ? near2(dq_i, s, t, span) : 0), \
                        x * 2**(0.16 * (dq_r - dq_n / 2.0)))
stats data using (column(ycol) > 0 ? (DY[xslot(column("gpus"), strcol("panel") eq "fixed" ? 0 : 1) * 8 + int(column("sidx"))] = column(ycol), 0) : 0) nooutput

# ------------------------------------------------------------------- axes
set logscale x 2
set logscale y 10
set xrange [gmin / 1.3 : gmax * 1.3]
set format x "%g"
set format y "10^{%T}"
set mxtics default
set grid xtics ytics lc rgb "#d0d0d0" lw 0.5 dt 1
set border 3 lw 0.8
set tics nomirror out scale 0.6
smallfont = sprintf(",%g", fontsize - 1)
# one y label for both panels
set label 98 sprintf("GiB sent per GPU per layer (%s)", phase eq "total" ? "fwd + bwd" : phase) \
    at screen 0.025, screen 0.6 center rotate by 90
set multiplot
set lmargin at screen 0.17
set rmargin at screen 0.97
top = subtitle ne "" ? 0.925 : 0.975
if (subtitle ne "") set label 99 subtitle at screen 0.5, screen 0.975 center noenhanced font smallfont
# legend: one block under both panels, covering neither
set key at screen 0.5, screen 0.005 center bottom vertical maxrows 5 reverse Left width -1 samplen 2.2 \
        spacing 1.05 font smallfont noautotitle

# -------------------------------------------------------- (a) N fixed
set tmargin at screen top
set bmargin at screen top - 0.31
set xlabel ""
set format x ""
set label 1 sprintf("(a) N = %s tokens", tok(n_fixed)) at graph 0.03, graph 0.06 left front \
    font smallfont
set yrange [ya / 1.3 : yb * 1.3]
plot for [i=1:words(strategies)] data using (dodge(column("gpus"), sidx(word(strategies, i)), 0, log(yb / ya))):(sel("fixed", word(strategies, i))) \
     with linespoints lt sidx(word(strategies, i)) title label(word(strategies, i))
unset label 1
unset label 99
unset label 98

# ---------------------------------------------- (b) N growing with the GPUs
set tmargin at screen top - 0.36
set bmargin at screen 0.255
set format x "%g"
set xlabel "GPUs" offset 0,0.4
set label 1 sprintf("(b) N = %s tokens per GPU", tok(n_per_gpu)) at graph 0.03, graph 0.94 left front \
    font smallfont
unset key
set yrange [yc / 1.3 : yd * 1.3]
plot for [i=1:words(strategies)] data using (dodge(column("gpus"), sidx(word(strategies, i)), 1, log(yd / yc))):(sel("scaled", word(strategies, i))) \
     with linespoints lt sidx(word(strategies, i)) notitle
unset multiplot
