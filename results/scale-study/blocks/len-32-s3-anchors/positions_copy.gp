# copy: per-position accuracy and first wrong position (data: positions_copy.dat, one block per panel and row)
if (!exists('fmt')) fmt = 'svg'
if (!exists('outfile')) outfile = 'positions_copy.'.fmt
set encoding utf8
W = 18.00; H = 9.00  # inches
if (fmt eq 'pdf') {
  set terminal pdfcairo size W,H noenhanced font 'sans,9' linewidth 1
} else { if (fmt eq 'png') {
  set terminal pngcairo size W*150,H*150 noenhanced font 'sans,9' fontscale 150/72.0 linewidth 150/72.0 background rgb 'white'
} else {
  set terminal svg size W*72,H*72 dynamic noenhanced background rgb 'white' font 'sans,9'
} }
set output outfile
set multiplot layout 2,3 title 'copy: where the output breaks (training length L = 32, output position n+1 is the EOS)' font ',9'
set grid lc rgb '#dddddd' lw 0.5 dt 3
unset key
set title 'n = 48: accuracy of each position'
set xlabel 'output position'
set ylabel 'accuracy'
set xrange [0.5:49.5]
set yrange [0:1.02]
set arrow 1 from 32.5, graph 0 to 32.5, graph 1 nohead lw 2 dt 2 lc rgb 'black'
set label 1 'L = 32' at 32.5, graph 0.95 left offset 0.5,0
plot 'positions_copy.dat' index 0 using 1:2 with linespoints pt 7 ps 0.4 lw 1.5 dt 1 lc rgb '#0072B2' title 'alibi', \
     'positions_copy.dat' index 1 using 1:2 with linespoints pt 7 ps 0.4 lw 1.5 dt 1 lc rgb '#D55E00' title 'rope'
unset key
set title 'n = 64: accuracy of each position'
set xlabel 'output position'
set ylabel 'accuracy'
set xrange [0.5:65.5]
set yrange [0:1.02]
set arrow 1 from 32.5, graph 0 to 32.5, graph 1 nohead lw 2 dt 2 lc rgb 'black'
set label 1 'L = 32' at 32.5, graph 0.95 left offset 0.5,0
plot 'positions_copy.dat' index 2 using 1:2 with linespoints pt 7 ps 0.4 lw 1.5 dt 1 lc rgb '#0072B2' title 'alibi', \
     'positions_copy.dat' index 3 using 1:2 with linespoints pt 7 ps 0.4 lw 1.5 dt 1 lc rgb '#D55E00' title 'rope'
set key outside right top vertical font ',8'
set title 'n = 128: accuracy of each position'
set xlabel 'output position'
set ylabel 'accuracy'
set xrange [0.5:129.5]
set yrange [0:1.02]
set arrow 1 from 32.5, graph 0 to 32.5, graph 1 nohead lw 2 dt 2 lc rgb 'black'
set label 1 'L = 32' at 32.5, graph 0.95 left offset 0.5,0
plot 'positions_copy.dat' index 4 using 1:2 with linespoints pt 7 ps 0.4 lw 1.5 dt 1 lc rgb '#0072B2' title 'alibi', \
     'positions_copy.dat' index 5 using 1:2 with linespoints pt 7 ps 0.4 lw 1.5 dt 1 lc rgb '#D55E00' title 'rope'
unset key
set title 'n = 48: first wrong position (fraction of samples)'
set xlabel 'output position'
set ylabel 'fraction'
set xrange [0.5:49.5]
set yrange [0:1.02]
set arrow 1 from 32.5, graph 0 to 32.5, graph 1 nohead lw 2 dt 2 lc rgb 'black'
set label 1 'L = 32' at 32.5, graph 0.95 left offset 0.5,0
plot 'positions_copy.dat' index 0 using 1:3 with linespoints pt 7 ps 0.4 lw 1.5 dt 1 lc rgb '#0072B2' title 'alibi', \
     'positions_copy.dat' index 1 using 1:3 with linespoints pt 7 ps 0.4 lw 1.5 dt 1 lc rgb '#D55E00' title 'rope'
unset key
set title 'n = 64: first wrong position (fraction of samples)'
set xlabel 'output position'
set ylabel 'fraction'
set xrange [0.5:65.5]
set yrange [0:1.02]
set arrow 1 from 32.5, graph 0 to 32.5, graph 1 nohead lw 2 dt 2 lc rgb 'black'
set label 1 'L = 32' at 32.5, graph 0.95 left offset 0.5,0
plot 'positions_copy.dat' index 2 using 1:3 with linespoints pt 7 ps 0.4 lw 1.5 dt 1 lc rgb '#0072B2' title 'alibi', \
     'positions_copy.dat' index 3 using 1:3 with linespoints pt 7 ps 0.4 lw 1.5 dt 1 lc rgb '#D55E00' title 'rope'
set key outside right top vertical font ',8'
set title 'n = 128: first wrong position (fraction of samples)'
set xlabel 'output position'
set ylabel 'fraction'
set xrange [0.5:129.5]
set yrange [0:1.02]
set arrow 1 from 32.5, graph 0 to 32.5, graph 1 nohead lw 2 dt 2 lc rgb 'black'
set label 1 'L = 32' at 32.5, graph 0.95 left offset 0.5,0
plot 'positions_copy.dat' index 4 using 1:3 with linespoints pt 7 ps 0.4 lw 1.5 dt 1 lc rgb '#0072B2' title 'alibi', \
     'positions_copy.dat' index 5 using 1:3 with linespoints pt 7 ps 0.4 lw 1.5 dt 1 lc rgb '#D55E00' title 'rope'
unset multiplot
