# breakdown.gp: one optimizer step of each strategy split into compute,
# exposed communication and the per-step remainder (optimizer, exposed
# gradient synchronisation): a stacked bar whose length is the step time;
# under it, a thinner hatched bar: the communication that overlaps (hides
# under) the compute. One row per strategy, first on top; "OOM" marks a
# strategy whose layout does not fit in memory.
#
# Made by `ulysim plot breakdown ... -o FILE.png|svg|pdf`, which writes the
# data (FILE.csv) and runs:  gnuplot -e "data='FILE.csv'; out='FILE.png'; term='png'" breakdown.gp
# By hand, every variable is optional:
#   data        CSV written by `ulysim plot breakdown` [breakdown.csv]
#               columns used: label_short (the strategy's bar name), layout, fits,
#               compute_s, comm_exposed_s, step_fixed_s, comm_overlapped_s
#   out         output file [breakdown.<term>]
#   term        png (pngcairo) | svg | pdf (pdfcairo) [pdf]
#   width, height   size in inches [3.5 x 3.3: one paper column]
#   fontsize    points [9]; dpi: PNG resolution [300]
#   subtitle    a line above the plot naming the configuration ["": none]

# ------------------------------------------------------------------ output
if (!exists("data")) data = "breakdown.csv"
if (!exists("term")) term = "pdf"
if (!exists("out")) out = "breakdown." . term
if (!exists("width")) width = 3.5
if (!exists("height")) height = 3.3
if (!exists("fontsize")) fontsize = 9
if (!exists("dpi")) dpi = 300
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


# --------------------------------------------------------------- the parts
# colours of different lightness; the overlapped part is hatched
c_compute = "#0072B2"
c_exposed = "#D55E00"
c_fixed = "#bdbdbd"
c_hidden = "#D55E00"

# ------------------------------------------------------------------- data
set datafile separator comma
set datafile columnheaders
stats data using "step_s" nooutput
tmax = STATS_max
nbars = STATS_records
stats data using "comm_overlapped_s" nooutput
if (STATS_max > tmax) tmax = STATS_max
# where each part ends along the bar
e1(x) = column("compute_s")
e2(x) = e1(0) + column("comm_exposed_s")
e3(x) = e2(0) + column("step_fixed_s")
# rows: the step bar in the upper part of the row, the overlapped bar below it
top0 = -0.38
top1 = 0.06
low0 = 0.12
low1 = 0.34

# ------------------------------------------------------------------- axes
# about four tics whatever the range: a step of 1, 2 or 5 x 10^k
tic_step(r) = (r / 10**floor(log10(r)) <= 2) ? 10**floor(log10(r)) / 2 : \
              (r / 10**floor(log10(r)) <= 5) ? 10**floor(log10(r)) : 2 * 10**floor(log10(r))
smallfont = sprintf(",%g", fontsize - 1)
set xrange [0 : tmax * 1.22]
set yrange [nbars - 0.5 : -0.5]
set xlabel "time per optimizer step (s)"
set ytics scale 0 font smallfont
set xtics tic_step(tmax * 1.22) nomirror out scale 0.6 font smallfont
set grid xtics lc rgb "#d0d0d0" lw 0.5 dt 1
set border 3 lw 0.8
if (subtitle ne "") set label 99 subtitle at screen 0.5, screen 0.975 center noenhanced font smallfont
set tmargin (subtitle ne "" ? 2.2 : 1)
# legend under the axes, covering no data
# legend under the axes, centred on the page rather than on the axes (which
# the bar labels push right), so both columns fit one paper column
set bmargin 5.5
set key at screen 0.5, screen 0.005 center bottom vertical maxrows 2 reverse Left width -3 samplen 1.5 spacing 1.0 \
        font smallfont

plot data using (e1(0)):0:(0):(e1(0)):($0 + top0):($0 + top1): \
         ytic(strcol("label_short") . "\n" . strcol("layout")) \
         with boxxyerror lc rgb c_compute lw 0.5 fs solid 1.0 border rgb "#000000" title "compute", \
     data using (e2(0)):0:(e1(0)):(e2(0)):($0 + top0):($0 + top1) \
         with boxxyerror lc rgb c_exposed lw 0.5 fs solid 1.0 border rgb "#000000" title "exposed comm.", \
     data using (e3(0)):0:(e2(0)):(e3(0)):($0 + top0):($0 + top1) \
         with boxxyerror lc rgb c_fixed lw 0.5 fs solid 1.0 border rgb "#000000" title "optimizer + DP sync", \
     data using "comm_overlapped_s":0:(0):"comm_overlapped_s":($0 + low0):($0 + low1) \
         with boxxyerror lc rgb c_hidden lw 0.5 fs pattern 4 border rgb "#000000" title "overlapped comm.", \
     data using (e3(0)):($0 + (top0 + top1) / 2):(column("fits") == 1 ? "" : " OOM") \
         with labels left font smallfont noenhanced notitle
