if (!exists('fmt')) fmt = 'svg'
if (!exists('outfile')) outfile = 'lm_positions_lm.'.fmt
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
set datafile separator ','
set xlabel 'context (tokens) of the prediction'
set ylabel 'mean NLL (nats)'
set title 'lm: loss by position, chunks of 4L = 128 tokens (L = 32 marked)'
set key outside right
set arrow from 32, graph 0 to 32, graph 1 nohead dt 3
plot 'runs/lm-none-seed1/lm_positions.csv' every ::1 using 2:7 with lines title 'none seed 1', 'runs/lm-sinusoidal-seed1/lm_positions.csv' every ::1 using 2:7 with lines title 'sinusoidal seed 1', 'runs/lm-learned-seed1/lm_positions.csv' every ::1 using 2:7 with lines title 'learned seed 1', 'runs/lm-t5-seed1/lm_positions.csv' every ::1 using 2:7 with lines title 't5 seed 1', 'runs/lm-alibi-seed1/lm_positions.csv' every ::1 using 2:7 with lines title 'alibi seed 1', 'runs/lm-rope-seed1/lm_positions.csv' every ::1 using 2:7 with lines title 'rope seed 1'
