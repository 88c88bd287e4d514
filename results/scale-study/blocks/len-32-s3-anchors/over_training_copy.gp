# over_training_copy.gp: extrapolation over training (data: over_training_copy.dat, per row three blocks: the bands n<=L, L<n<=1.5L, n>1.5L)
if (!exists('fmt')) fmt = 'svg'
if (!exists('outfile')) outfile = 'over_training_copy.'.fmt
set encoding utf8
W = 11.60; H = 4.80  # inches
if (fmt eq 'pdf') {
  set terminal pdfcairo size W,H noenhanced font 'sans,9' linewidth 1
} else { if (fmt eq 'png') {
  set terminal pngcairo size W*150,H*150 noenhanced font 'sans,9' fontscale 150/72.0 linewidth 150/72.0 background rgb 'white'
} else {
  set terminal svg size W*72,H*72 dynamic noenhanced background rgb 'white' font 'sans,9'
} }
set output outfile
set multiplot layout 1,2 title 'copy over training (L = 32): dotted n<=L, solid L<n<=1.5L, dashed n>1.5L; first 32 samples per length, mean over seeds' font ',9'
set grid lc rgb '#dddddd' lw 0.5 dt 3
set xlabel 'step'
set format x '%.0s%c'
set yrange [0:1.02]
unset key
set ylabel 'exact match'
plot 'over_training_copy.dat' index 0 using 1:2 with lines lw 1.8 dt 3 lc rgb '#0072B2' notitle, \
     'over_training_copy.dat' index 1 using 1:2 with lines lw 1.8 dt 1 lc rgb '#0072B2' title 'alibi', \
     'over_training_copy.dat' index 2 using 1:2 with lines lw 1.8 dt 2 lc rgb '#0072B2' notitle, \
     'over_training_copy.dat' index 3 using 1:2 with lines lw 1.8 dt 3 lc rgb '#D55E00' notitle, \
     'over_training_copy.dat' index 4 using 1:2 with lines lw 1.8 dt 1 lc rgb '#D55E00' title 'rope', \
     'over_training_copy.dat' index 5 using 1:2 with lines lw 1.8 dt 2 lc rgb '#D55E00' notitle
set key outside right top vertical font ',8'
set ylabel 'token accuracy'
plot 'over_training_copy.dat' index 0 using 1:3 with lines lw 1.8 dt 3 lc rgb '#0072B2' notitle, \
     'over_training_copy.dat' index 1 using 1:3 with lines lw 1.8 dt 1 lc rgb '#0072B2' title 'alibi', \
     'over_training_copy.dat' index 2 using 1:3 with lines lw 1.8 dt 2 lc rgb '#0072B2' notitle, \
     'over_training_copy.dat' index 3 using 1:3 with lines lw 1.8 dt 3 lc rgb '#D55E00' notitle, \
     'over_training_copy.dat' index 4 using 1:3 with lines lw 1.8 dt 1 lc rgb '#D55E00' title 'rope', \
     'over_training_copy.dat' index 5 using 1:3 with lines lw 1.8 dt 2 lc rgb '#D55E00' notitle
unset multiplot
