# reproduce_rsa.gp: Sequence Parallelism / RSA Table 4, memory per GPU, predicted against published.
# Written by `ulysim reproduce rsa -o DIR`; usable by hand:
#   gnuplot -e "datafile='reproduce_rsa.dat'; outfile='reproduce_rsa.png'" reproduce_rsa.gp
# Variables: datafile (required): two blocks (batch scaling, sequence scaling), columns
#            label tp_pub tp_pred sp_pub sp_pred in MiB (NaN: out of memory or no prediction), why_x
#            (offset of the first missing bar's slot, NaN: none) and why (why the bars are missing,
#            written under the panel's title, the empty slot marked with a dagger);
#            outfile (required): .png, .svg or .pdf picks the terminal.
# Style: width, height (inches), fontsize (points), dpi (PNG) may be set too.
if (!exists("datafile")) datafile = 'reproduce_rsa.dat'
if (!exists("outfile")) outfile = 'reproduce_rsa.png'
# the style of every ulysim figure: Sans at 9 points (8 for legends and
# notes), sizes in inches (a page's width, two columns), PNG at 300 dpi
if (!exists("width")) width = 7
if (!exists("height")) height = 3.4
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
set ylabel "max allocated per GPU (MiB)"
set yrange [0:*]
# a missing bar: its empty slot is marked with a dagger just above the axis,
# and why it is missing is written under the panel's title, in lines of at
# most 44 characters broken at spaces (written up the slot it ran into the
# bars beside it)
graph_lo = 100
lastsp(s, n) = n < 1 ? 0 : (s[n:n] eq " " ? n : lastsp(s, n - 1))
wrap(s, n) = strlen(s) <= n ? s : (lastsp(s, n) > 0 ? s[1:lastsp(s, n) - 1] . "\n" . wrap(s[lastsp(s, n) + 1:], n) : s)
why0 = ""
why1 = ""
stats datafile index 0 using (strcol(7) ne "" ? (why0 = strcol(7), 0) : 0) nooutput
stats datafile index 1 using (strcol(7) ne "" ? (why1 = strcol(7), 0) : 0) nooutput
note(t, w) = w eq "" ? t : t . "\n† " . wrap(w, 44)
dagger(w) = w eq "" ? "" : "†"
set multiplot layout 1,2 title "RSA Table 4: BERT Base, P100 16GB, pipeline 8 (ulysim reproduce)"
set title note("batch scaling, sequence 512", why0) noenhanced
plot datafile index 0 using 2:xtic(1) title "TP published" lc rgb "#4d4d4d", \
     '' index 0 using 3 title "TP predicted" lc rgb "#a6a6a6", \
     '' index 0 using 4 title "SP published" lc rgb "#1f77b4", \
     '' index 0 using 5 title "SP predicted" lc rgb "#9ecae1", \
     '' index 0 using ($0 + $6):(graph_lo):(dagger(strcol(7))) with labels left notitle
set title note("sequence scaling, batch 64", why1) noenhanced
plot datafile index 1 using 2:xtic(1) title "TP published" lc rgb "#4d4d4d", \
     '' index 1 using 3 title "TP predicted" lc rgb "#a6a6a6", \
     '' index 1 using 4 title "SP published" lc rgb "#1f77b4", \
     '' index 1 using 5 title "SP predicted" lc rgb "#9ecae1", \
     '' index 1 using ($0 + $6):(graph_lo):(dagger(strcol(7))) with labels left notitle
unset multiplot
