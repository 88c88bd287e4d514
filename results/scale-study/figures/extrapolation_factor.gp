# The extrapolation factor (largest n / L with exact match >= 0.5 in at least half the seeds) against the training
# length L, copy, d_model 64 x 2, 10000 steps; Zhou et al. 2024's addition with FIRE and index hints beside it.
# 0 = not learned at L. Data: extrapolation_factor.dat, written by ../summary.py length.
# Run from this folder: gnuplot extrapolation_factor.gp (writes the .svg and the .png)
$zhou << EOD
10 1.0
20 1.25
30 1.5
40 2.5
EOD
set terminal svg size 720,460 font "sans,12"
set output "extrapolation_factor.svg"
set title "copy, d_model 64 x 2: extrapolation factor against training length (0: not learned at L)" noenhanced
set xlabel "training length L"
set ylabel "largest n / L with exact match >= 0.5"
set key outside below horizontal
set xrange [0:44]
set yrange [-0.1:2.7]
set grid
# T5 and RoPE share every point: T5 drawn with open squares over RoPE's filled circles
plot for [i=2:6] "extrapolation_factor.dat" using 1:i with linespoints lw 2 pt (i == 3 ? 4 : 7) ps (i == 3 ? 1.8 : 1) title columnheader(i), \
     $zhou using 1:2 with linespoints dt 2 lw 2 pt 6 lc rgb "black" title "Zhou 2024 (addition, FIRE + hints)"
set terminal pngcairo size 720,460 font "sans,10"
set output "extrapolation_factor.png"
replot
