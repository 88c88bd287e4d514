# extrapolation.gp: heatmaps of the report (data: extrapolation.dat, one block per task)
if (!exists('fmt')) fmt = 'svg'
if (!exists('outfile')) outfile = 'extrapolation.'.fmt
set encoding utf8
W = 25.33; H = 2.83  # inches
if (fmt eq 'pdf') {
  set terminal pdfcairo size W,H noenhanced font 'sans,9' linewidth 1
} else { if (fmt eq 'png') {
  set terminal pngcairo size W*150,H*150 noenhanced font 'sans,9' fontscale 150/72.0 linewidth 150/72.0 background rgb 'white'
} else {
  set terminal svg size W*72,H*72 dynamic noenhanced background rgb 'white' font 'sans,9'
} }
set output outfile
set datafile missing 'nan'
set palette defined (0 '#ffffff', 0.25 '#c6dbef', 0.5 '#6baed6', 0.75 '#2171b5', 1 '#08306b')
set cbrange [0:1]
set cbtics 0.25 font ',7'
set tics scale 0
set multiplot
set lmargin at screen 0.0655
set rmargin at screen 0.6625
set tmargin at screen 0.8057
set bmargin at screen 0.3357
set title 'copy: exact match (mean, k/N seeds >= 0.5)' font ',9' offset 0,0.6
set xrange [-0.5:20.5]
set yrange [6.5:-0.5]
set xtics ("16" 0, "32\n(train)" 1, "33" 2, "34" 3, "35" 4, "36" 5, "37" 6, "38" 7, "39" 8, "40" 9, "41" 10, "42" 11, "43" 12, "44" 13, "45" 14, "46" 15, "47" 16, "48" 17, "64" 18, "96" 19, "128" 20)
unset colorbox
set ytics ("alibi" 0, "rope" 1, "rope+pi" 2, "rope+ntk" 3, "rope+yarn" 4, "rope+llama3" 5, "rope+dynamic" 6)
unset arrow
unset label
set xlabel 'test length n (symbols)' offset 0,-0.5
set arrow from 1.5, graph 0 to 1.5, graph 1.04 nohead lw 2 lc rgb 'black' front
set label 'training length n <= 32' at 1.5, graph 1 right offset -0.8,0.8 font ',7'
set label 'longer: extrapolation' at 1.5, graph 1 left offset 0.8,0.8 font ',7'
plot 'extrapolation.dat' index 0 using 1:2:3 with image pixels notitle, \
     '' index 0 using 1:2:5:(column(3) > 0.6 ? 0xffffff : 0) with labels tc rgb variable font ',7' notitle
set lmargin at screen 0.6719
set rmargin at screen 0.9704
set tmargin at screen 0.8057
set bmargin at screen 0.3357
set title 'token accuracy (mean)' font ',9' offset 0,0.6
set xrange [-0.5:20.5]
set yrange [6.5:-0.5]
set xtics ("16" 0, "32\n(train)" 1, "33" 2, "34" 3, "35" 4, "36" 5, "37" 6, "38" 7, "39" 8, "40" 9, "41" 10, "42" 11, "43" 12, "44" 13, "45" 14, "46" 15, "47" 16, "48" 17, "64" 18, "96" 19, "128" 20)
set colorbox user origin screen 0.9755, screen 0.3357 size screen 0.0047, screen 0.4700
set cblabel 'fraction' offset -0.5,0
unset ytics
unset arrow
unset label
set xlabel 'test length n (symbols)' offset 0,-0.5
set arrow from 1.5, graph 0 to 1.5, graph 1.04 nohead lw 2 lc rgb 'black' front
plot 'extrapolation.dat' index 0 using 1:2:4 with image pixels notitle, \
     '' index 0 using 1:2:6:(column(4) > 0.6 ? 0xffffff : 0) with labels tc rgb variable font ',7' notitle
unset multiplot
