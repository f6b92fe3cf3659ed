# reproduce_ulysses.gp: DeepSpeed-Ulysses Tables 2-3, predicted against published.
# Written by `ulysim reproduce ulysses -o DIR`; usable by hand:
#   gnuplot -e "datafile='reproduce_ulysses.dat'; outfile='reproduce_ulysses.png'" reproduce_ulysses.gp
# Variables: datafile (required): columns label time_s_pub time_s_pred tflops_pub tflops_pred;
#            outfile (required): .png, .svg or .pdf picks the terminal.
if (!exists("datafile")) datafile = 'reproduce_ulysses.dat'
if (!exists("outfile")) outfile = 'reproduce_ulysses.png'
ext = outfile[strlen(outfile)-3:]
if (ext eq "svg") { set terminal svg size 1100,420 font "Helvetica,11" } \
else { if (ext eq "pdf") { set terminal pdfcairo size 11in,4.2in font "Helvetica,10" } \
else { set terminal pngcairo size 1100,420 font "Helvetica,10" } }
set output outfile
set datafile missing "NaN"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key top left horizontal
set offsets 0, 0, graph 0.18, 0
set grid ytics
set xtics rotate by -30 nomirror
set bmargin 5
set multiplot layout 1,2 title "DeepSpeed-Ulysses Tables 2-3: GPT-7B, A100 40GB, global batch 8 (ulysim reproduce)"
set title "iteration time"
set ylabel "seconds"
set yrange [0:*]
plot datafile using 2:xtic(1) title "published" lc rgb "#4d4d4d", \
     '' using 3 title "predicted" lc rgb "#1f77b4"
set title "TFLOP/s per GPU (paper's accounting)"
set ylabel "TFLOP/s"
plot datafile using 4:xtic(1) title "published" lc rgb "#4d4d4d", \
     '' using 5 title "predicted" lc rgb "#1f77b4"
unset multiplot
