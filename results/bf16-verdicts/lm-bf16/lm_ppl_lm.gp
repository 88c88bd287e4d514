if (!exists('fmt')) fmt = 'svg'
if (!exists('outfile')) outfile = 'lm_ppl_lm.'.fmt
set encoding utf8
W = 7.00; H = 4.20  # inches
if (fmt eq 'pdf') {
  set terminal pdfcairo size W,H noenhanced font 'sans,9' linewidth 1
} else { if (fmt eq 'png') {
  set terminal pngcairo size W*150,H*150 noenhanced font 'sans,9' fontscale 150/72.0 linewidth 150/72.0 background rgb 'white'
} else {
  set terminal svg size W*72,H*72 dynamic noenhanced background rgb 'white' font 'sans,9'
} }
set output outfile
set logscale xy
set xlabel 'context / L (L = 32)'
set ylabel 'validation perplexity (median over seeds)'
set title 'lm: chunks (solid), sliding window (dashed)'
set key outside right
set xtics ('1' 1, '' 1.25, '1.5' 1.5, '2' 2, '4' 4, '8' 8)
set label 1 '1.25' at 1.25, graph 0 center offset 0, -2
plot 'lm_ppl_lm.dat' index 0 using 1:2 with linespoints lc 1 dt 1 title 'none', 'lm_ppl_lm.dat' index 0 using 1:3 with linespoints lc 1 dt 2 notitle, 'lm_ppl_lm.dat' index 1 using 1:2 with linespoints lc 2 dt 1 title 'sinusoidal', 'lm_ppl_lm.dat' index 1 using 1:3 with linespoints lc 2 dt 2 notitle, 'lm_ppl_lm.dat' index 2 using 1:2 with linespoints lc 3 dt 1 title 'learned', 'lm_ppl_lm.dat' index 2 using 1:3 with linespoints lc 3 dt 2 notitle, 'lm_ppl_lm.dat' index 3 using 1:2 with linespoints lc 4 dt 1 title 't5', 'lm_ppl_lm.dat' index 3 using 1:3 with linespoints lc 4 dt 2 notitle, 'lm_ppl_lm.dat' index 4 using 1:2 with linespoints lc 5 dt 1 title 'alibi', 'lm_ppl_lm.dat' index 4 using 1:3 with linespoints lc 5 dt 2 notitle, 'lm_ppl_lm.dat' index 5 using 1:2 with linespoints lc 6 dt 1 title 'rope', 'lm_ppl_lm.dat' index 5 using 1:3 with linespoints lc 6 dt 2 notitle
