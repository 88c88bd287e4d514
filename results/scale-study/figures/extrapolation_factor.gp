# The extrapolation factor (largest n / L with exact match >= 0.5 in at least half the seeds) against the training
# length L, copy, d_model 64 x 2, 10000 steps; Zhou et al. 2024's addition with FIRE and index hints beside it.
# Data: extrapolation_factor.dat, written by ../summary.py length. Run from this folder: gnuplot extrapolation_factor.gp
set terminal svg size 720,440 font "sans,12"
set output "extrapolation_factor.svg"
set title "copy: extrapolation factor against training length (0 = not learned at L)"
set xlabel "training length L"
set ylabel "largest n / L with exact match >= 0.5 (half the seeds)"
set key outside right top
set xrange [0:44]
set yrange [-0.1:*]
set grid
plot for [i=2:6] "extrapolation_factor.dat" using 1:i with linespoints lw 2 pt 7 title columnheader(i), \
     "-" using 1:2 with linespoints dt 2 lw 2 pt 6 lc rgb "black" title "Zhou 2024 (addition, FIRE + hints)"
10 1.0
20 1.25
30 1.5
40 2.5
e
