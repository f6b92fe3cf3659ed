# reproduce_claims.gp: headline ratios of the two seed papers, predicted against published.
# Written by `ulysim reproduce -o DIR`; usable by hand:
#   gnuplot -e "datafile='reproduce_claims.dat'; outfile='reproduce_claims.png'" reproduce_claims.gp
# Variables: datafile (required): columns label published predicted (ratios, x; NaN: no prediction);
#            outfile (required): .png, .svg or .pdf picks the terminal.
# Style: width, height (inches), fontsize (points), dpi (PNG) may be set too.
if (!exists("datafile")) datafile = 'reproduce_claims.dat'
if (!exists("outfile")) outfile = 'reproduce_claims.png'
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
set logscale y
set yrange [0.5:*]
set ylabel "ratio (x)"
set title "Headline ratios: published against predicted (ulysim reproduce)"
plot datafile using 2:xtic(1) title "published" lc rgb "#4d4d4d", \
     '' using 3 title "predicted" lc rgb "#1f77b4"
