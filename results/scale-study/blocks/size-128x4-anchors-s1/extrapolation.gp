# extrapolation.gp: heatmaps of the report (data: extrapolation.dat, one block per task)
if (!exists('fmt')) fmt = 'svg'
if (!exists('outfile')) outfile = 'extrapolation.'.fmt
set encoding utf8
W = 17.23; H = 3.02  # inches
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
set lmargin at screen 0.1277
set rmargin at screen 0.6709
set tmargin at screen 0.8179
set bmargin at screen 0.3146
set title 'copy: exact match (mean, k/N seeds >= 0.5)' font ',9' offset 0,0.6
set xrange [-0.5:12.5]
set yrange [7.5:-0.5]
set xtics ("8" 0, "16\n(train)" 1, "17" 2, "18" 3, "19" 4, "20" 5, "21" 6, "22" 7, "23" 8, "24" 9, "32" 10, "48" 11, "64" 12)
unset colorbox
set ytics ("alibi 128x4" 0, "rope 128x4" 1, "rope+pi 128x4" 2, "rope+ntk 128x4" 3, "rope+yarn 128x4" 4, "rope+llama3 128x4" 5, "rope+dynamic 128x4" 6, "kerple-log 128x4" 7)
unset arrow
unset label
set xlabel 'test length n (symbols)' offset 0,-0.5
set arrow from 1.5, graph 0 to 1.5, graph 1.04 nohead lw 2 lc rgb 'black' front
set label 'training length n <= 16' at 1.5, graph 1 right offset -0.8,0.8 font ',7'
set label 'longer: extrapolation' at 1.5, graph 1 left offset 0.8,0.8 font ',7'
plot 'extrapolation.dat' index 0 using 1:2:3 with image pixels notitle, \
     '' index 0 using 1:2:5:(column(3) > 0.6 ? 0xffffff : 0) with labels tc rgb variable font ',7' notitle
set lmargin at screen 0.6849
set rmargin at screen 0.9565
set tmargin at screen 0.8179
set bmargin at screen 0.3146
set title 'token accuracy (mean)' font ',9' offset 0,0.6
set xrange [-0.5:12.5]
set yrange [7.5:-0.5]
set xtics ("8" 0, "16\n(train)" 1, "17" 2, "18" 3, "19" 4, "20" 5, "21" 6, "22" 7, "23" 8, "24" 9, "32" 10, "48" 11, "64" 12)
set colorbox user origin screen 0.9640, screen 0.3146 size screen 0.0070, screen 0.5033
set cblabel 'fraction' offset -0.5,0
unset ytics
unset arrow
unset label
set xlabel 'test length n (symbols)' offset 0,-0.5
set arrow from 1.5, graph 0 to 1.5, graph 1.04 nohead lw 2 lc rgb 'black' front
plot 'extrapolation.dat' index 0 using 1:2:4 with image pixels notitle, \
     '' index 0 using 1:2:6:(column(4) > 0.6 ? 0xffffff : 0) with labels tc rgb variable font ',7' notitle
unset multiplot
