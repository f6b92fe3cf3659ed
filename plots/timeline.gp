# timeline.gp: one ulyharness run's operations in execution order, laid end
# to end as the harness runs them (a barrier before each): the measured
# timeline above the one libulysim predicts for the same plan. Colour and fill
# say what an operation is; the ones wide enough are named (in both lanes).
#
# Made by `ulysim plot timeline TRACE -o FILE.png|svg|pdf`, which writes the
# data (FILE.csv) and runs:  gnuplot -e "data='FILE.csv'; out='FILE.png'; term='png'" timeline.gp
# By hand, every variable is optional:
#   data        CSV written by `ulysim plot timeline` [timeline.csv]
#               columns used: op, kind, predicted_start_s, predicted_s, measured_start_s, measured_s
#   out         output file [timeline.<term>]
#   term        png (pngcairo) | svg | pdf (pdfcairo) [pdf]
#   width, height   size in inches [7 x 2.2: the width of a page, two columns]
#   fontsize    points [9]; dpi: PNG resolution [300]
#   subtitle    a line above the plot naming the configuration ["": none]

# ------------------------------------------------------------------ output
if (!exists("data")) data = "timeline.csv"
if (!exists("term")) term = "pdf"
if (!exists("out")) out = "timeline." . term
if (!exists("width")) width = 7
if (!exists("height")) height = 2.2
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


# ------------------------------------------------------------- the kinds
# colours of different lightness; communication is also hatched
array K[4] = ["gemm", "attn", "elem", "comm"]
array KL[4] = ["GEMM", "attention", "elementwise", "communication"]
array KC[4] = ["#0072B2", "#E69F00", "#bdbdbd", "#D55E00"]
array KF[4] = [3, 3, 3, 4]   # fill pattern: 3 solid, 4 hatched

# ------------------------------------------------------------------- data
set datafile separator comma
set datafile columnheaders
stats data using (column("measured_start_s") + column("measured_s")) nooutput
tm = STATS_max
stats data using (column("predicted_start_s") + column("predicted_s")) nooutput
tp = STATS_max
tmax = tm > tp ? tm : tp
# the time unit of the axis
us = tmax < 2e-3 ? 1e6 : tmax < 2 ? 1e3 : 1
uname = us == 1e6 ? "µs" : us == 1e3 ? "ms" : "s"
# lanes: measured at 0 (top), predicted at 1
half = 0.3
is(k) = strcol("kind") eq K[k]
# an operation is named inside its box where its name fits: the plot is
# about width - 2.3 inches wide, a character of the small font about 0.55 em.
# An operation named in the predicted lane is named in the measured lane too,
# above its box where the name does not fit inside: a name in the predicted
# lane alone reads as an operation the run did not have
charw = (fontsize - 2) * 0.55 / 72 * (tmax * 1.01) / (width - 2.3)
fits(d) = d > (strlen(strcol("op")) + 1) * charw
name_if(d) = fits(d) ? strcol("op") : ""
name_above(dummy) = !fits(column("measured_s")) && fits(column("predicted_s")) ? strcol("op") : ""

# ------------------------------------------------------------------- axes
smallfont = sprintf(",%g", fontsize - 1)
tinyfont = sprintf(",%g", fontsize - 2)
set xrange [0 : tmax * us * 1.01]
set yrange [1.6 : -0.75]
set ytics ("measured" 0, "predicted" 1) scale 0
set xtics nomirror out scale 0.6 font smallfont
set xlabel sprintf("time from the start of the run (%s)", uname)
set grid xtics lc rgb "#d0d0d0" lw 0.5 dt 1
set border 1 lw 0.8
if (subtitle ne "") set label 99 subtitle at screen 0.5, screen 0.975 center noenhanced font smallfont
set tmargin (subtitle ne "" ? 2.2 : 1)
set key outside right center vertical reverse Left width 0 samplen 1.2 spacing 1.0 font smallfont

plot for [k=1:4] data using ((column("measured_start_s") + column("measured_s") / 2) * us):(is(k) ? 0 : NaN): \
         (column("measured_start_s") * us):((column("measured_start_s") + column("measured_s")) * us):(0 - half):(0 + half) \
         with boxxyerror lc rgb KC[k] lw 0.3 fs pattern KF[k] border rgb "#000000" title KL[k], \
     for [k=1:4] data using ((column("predicted_start_s") + column("predicted_s") / 2) * us):(is(k) ? 1 : NaN): \
         (column("predicted_start_s") * us):((column("predicted_start_s") + column("predicted_s")) * us):(1 - half):(1 + half) \
         with boxxyerror lc rgb KC[k] lw 0.3 fs pattern KF[k] border rgb "#000000" notitle, \
     data using ((column("measured_start_s") + column("measured_s") / 2) * us):(0):(name_if(column("measured_s"))) \
         with labels font tinyfont noenhanced notitle, \
     data using ((column("measured_start_s") + column("measured_s") / 2) * us):(0 - half - 0.15):(name_above(0)) \
         with labels font tinyfont noenhanced notitle, \
     data using ((column("predicted_start_s") + column("predicted_s") / 2) * us):(1):(name_if(column("predicted_s"))) \
         with labels font tinyfont noenhanced notitle
