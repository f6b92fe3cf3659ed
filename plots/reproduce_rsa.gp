# reproduce_rsa.gp: Sequence Parallelism / RSA Table 4, memory per GPU, predicted against published.
# Written by `ulysim reproduce rsa -o DIR`; usable by hand:
#   gnuplot -e "datafile='reproduce_rsa.dat'; outfile='reproduce_rsa.png'" reproduce_rsa.gp
# Variables: datafile (required): two blocks (batch scaling, sequence scaling), columns
#            label tp_pub tp_pred sp_pub sp_pred in MiB (NaN: out of memory or no prediction), why_x
#            (offset of the first missing bar's slot, NaN: none) and why (why the bars are missing,
#            written up the empty slot);
#            outfile (required): .png, .svg or .pdf picks the terminal.
if (!exists("datafile")) datafile = 'reproduce_rsa.dat'
if (!exists("outfile")) outfile = 'reproduce_rsa.png'
ext = outfile[strlen(outfile)-3:]
if (ext eq "svg") { set terminal svg size 1100,520 font "Helvetica,11" } \
else { if (ext eq "pdf") { set terminal pdfcairo size 11in,5.2in font "Helvetica,10" } \
else { set terminal pngcairo size 1100,520 font "Helvetica,10" } }
set output outfile
set datafile missing "NaN"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key top left horizontal
set offsets 0, 0, graph 0.18, 0
set grid ytics
set ylabel "max allocated per GPU (MiB)"
set xtics rotate by -30 nomirror
set yrange [0:*]
# where a missing bar's reason starts: just above the axis
graph_lo = 100
set multiplot layout 1,2 title "RSA Table 4: BERT Base, P100 16GB, pipeline 8 (ulysim reproduce)"
set title "batch scaling, sequence 512"
plot datafile index 0 using 2:xtic(1) title "TP published" lc rgb "#4d4d4d", \
     '' index 0 using 3 title "TP predicted" lc rgb "#a6a6a6", \
     '' index 0 using 4 title "SP published" lc rgb "#1f77b4", \
     '' index 0 using 5 title "SP predicted" lc rgb "#9ecae1", \
     '' index 0 using ($0 + $6):(graph_lo):7 with labels rotate by 90 left font ",7" notitle
set title "sequence scaling, batch 64"
plot datafile index 1 using 2:xtic(1) title "TP published" lc rgb "#4d4d4d", \
     '' index 1 using 3 title "TP predicted" lc rgb "#a6a6a6", \
     '' index 1 using 4 title "SP published" lc rgb "#1f77b4", \
     '' index 1 using 5 title "SP predicted" lc rgb "#9ecae1", \
     '' index 1 using ($0 + $6):(graph_lo):7 with labels rotate by 90 left font ",7" notitle
unset multiplot
