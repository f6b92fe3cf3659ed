# reproduce_ulysses.gp: DeepSpeed-Ulysses Tables 2-3, predicted against published.
# Written by `ulysim reproduce ulysses -o DIR`; usable by hand:
#   gnuplot -e "datafile='reproduce_ulysses.dat'; outfile='reproduce_ulysses.png'" reproduce_ulysses.gp
# Variables: datafile (required): columns label time_s_pub time_s_pred tflops_pub tflops_pred;
#            outfile (required): .png, .svg or .pdf picks the terminal.
# Style: width, height (inches), fontsize (points), dpi (PNG) may be set too.
if (!exists("datafile")) datafile = 'reproduce_ulysses.dat'
if (!exists("outfile")) outfile = 'reproduce_ulysses.png'
# the style of every ulysim figure: Sans at 9 points (8 for legends and
# notes), sizes in inches (a page's width, two columns), PNG at 300 dpi
if (!exists("width")) width = 7
if (!exists("height")) height = 2.8
if (!exists("fontsize")) fontsize = 9
if (!exists("dpi")) dpi = 300
ext = outfile[strlen(outfile)-2:]  # the last three characters
if (ext eq "svg") { eval sprintf('set terminal svg enhanced size %g,%g font "Sans,%g" linewidth 1 background "white"', width*72, height*72, fontsize) } \
else { if (ext eq "pdf") { eval sprintf('set terminal pdfcairo enhanced size %gin,%gin font "Sans,%g" linewidth 2', width, height, fontsize) } \
else { eval sprintf('set terminal pngcairo enhanced size %d,%d font "Sans,%g" fontscale %g linewidth %g', width*dpi, height*dpi, fontsize, dpi/96.0, dpi/72.0) } }
set output outfile
smallfont = sprintf(",%g", fontsize - 1)
set datafile missing "NaN"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics lc rgb "#d0d0d0" lw 0.5 dt 1
set border 3 lw 0.8
set tics nomirror out scale 0.6
# the x labels turned 30 degrees and ending at their tick: none runs past the
# frame; the legend under the panels, below the title and covering no bar
set xtics rotate by 30 right font smallfont noenhanced
set key outside below center horizontal samplen 1.5 font smallfont
# about five labelled y ticks: a step of 1, 2 or 5 times a power of ten
nice(x) = (e = 10.0**floor(log10(x)), x / e <= 1 ? e : x / e <= 2 ? 2 * e : x / e <= 5 ? 5 * e : 10 * e)
stats datafile using 2 nooutput
t_max = STATS_max
stats datafile using 3 nooutput
t_max = STATS_max > t_max ? STATS_max : t_max
stats datafile using 4 nooutput
f_max = STATS_max
stats datafile using 5 nooutput
f_max = STATS_max > f_max ? STATS_max : f_max
set multiplot layout 1,2 title "DeepSpeed-Ulysses Tables 2-3: GPT-7B, A100 40GB, global batch 8 (ulysim reproduce)"
set title "iteration time"
set ylabel "seconds"
set ytics nice(t_max / 5)
set yrange [0:*]
plot datafile using 2:xtic(1) title "published" lc rgb "#4d4d4d", \
     '' using 3 title "predicted" lc rgb "#1f77b4"
set title "TFLOP/s per GPU (paper's accounting)"
set ylabel "TFLOP/s"
set ytics nice(f_max / 5)
plot datafile using 4:xtic(1) title "published" lc rgb "#4d4d4d", \
     '' using 5 title "predicted" lc rgb "#1f77b4"
unset multiplot
