# loss_copy.gp: training loss of every copy run (data: loss_copy.dat, one block per run, from runs/<task>-<pos>[-<variant>]-seed<S>/train.csv)
if (!exists('fmt')) fmt = 'svg'
if (!exists('outfile')) outfile = 'loss_copy.'.fmt
set encoding utf8
W = 7.00; H = 3.40  # inches
if (fmt eq 'pdf') {
  set terminal pdfcairo size W,H noenhanced font 'sans,9' linewidth 1
} else { if (fmt eq 'png') {
  set terminal pngcairo size W*150,H*150 noenhanced font 'sans,9' fontscale 150/72.0 linewidth 150/72.0 background rgb 'white'
} else {
  set terminal svg size W*72,H*72 dynamic noenhanced background rgb 'white' font 'sans,9'
} }
set output outfile
set lmargin at screen 0.1071
set rmargin at screen 0.8571
set tmargin at screen 0.88
set title 'copy: training loss (every seed, one colour per encoding)' font ',10'
set xlabel 'training step'
set ylabel 'loss (nats per token, log scale)' font ',8'
set logscale y
set grid lc rgb '#dddddd' lw 0.5 dt 3
set key at screen 0.8686, screen 0.88 left top reverse Left font ',8' spacing 1.0 samplen 2 maxcols 1
plot 'loss_copy.dat' index 0 using 1:2 with lines lw 1 dt 1 lc rgb '#0072B2' title 'alibi', \
     'loss_copy.dat' index 1 using 1:2 with lines lw 1 dt 1 lc rgb '#D55E00' title 'rope'
