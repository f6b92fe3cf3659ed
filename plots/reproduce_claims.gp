# reproduce_claims.gp: headline ratios of the two seed papers, predicted against published.
# Written by `ulysim reproduce -o DIR`; usable by hand:
#   gnuplot -e "datafile='reproduce_claims.dat'; outfile='reproduce_claims.png'" reproduce_claims.gp
# Variables: datafile (required): columns label published predicted (ratios, x; NaN: no prediction);
#            outfile (required): .png, .svg or .pdf picks the terminal.
if (!exists("datafile")) datafile = 'reproduce_claims.dat'
if (!exists("outfile")) outfile = 'reproduce_claims.png'
ext = outfile[strlen(outfile)-3:]
if (ext eq "svg") { set terminal svg size 900,420 font "Helvetica,11" } \
else { if (ext eq "pdf") { set terminal pdfcairo size 9in,4.2in font "Helvetica,10" } \
else { set terminal pngcairo size 900,420 font "Helvetica,10" } }
set output outfile
set datafile missing "NaN"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key above horizontal
set rmargin 10
set bmargin 7
set grid ytics
set logscale y
set yrange [0.5:*]
set ylabel "ratio (x)"
set xtics rotate by -30 nomirror noenhanced
set title "Headline ratios: published against predicted (ulysim reproduce)"
plot datafile using 2:xtic(1) title "published" lc rgb "#4d4d4d", \
     '' using 3 title "predicted" lc rgb "#1f77b4"
