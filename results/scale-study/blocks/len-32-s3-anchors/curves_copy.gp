# curves_copy.gp: curves of the report (data: curves_copy.dat; per row: a block of means and 95% t intervals, then a block of per-seed values)
if (!exists('fmt')) fmt = 'svg'
if (!exists('outfile')) outfile = 'curves_copy.'.fmt
set encoding utf8
W = 7.00; H = 5.00  # inches
if (fmt eq 'pdf') {
  set terminal pdfcairo size W,H noenhanced font 'sans,9' linewidth 1
} else { if (fmt eq 'png') {
  set terminal pngcairo size W*150,H*150 noenhanced font 'sans,9' fontscale 150/72.0 linewidth 150/72.0 background rgb 'white'
} else {
  set terminal svg size W*72,H*72 dynamic noenhanced background rgb 'white' font 'sans,9'
} }
set output outfile
set datafile missing 'nan'
set multiplot
set xlabel 'test length n (symbols)' offset 0,0.4
set xrange [8.78:135.22]
set yrange [-0.02:1.08]
set ytics 0.25 font ',8'
set xtics font ',8'
set xtics ("16" 16, "32" 32, "" 33 1, "" 34 1, "" 35 1, "" 36 1, "" 37 1, "" 38 1, "" 39 1, "" 40 1, "" 41 1, "" 42 1, "" 43 1, "" 44 1, "" 45 1, "" 46 1, "" 47 1, "48" 48, "64" 64, "96" 96, "128" 128)
set grid lc rgb '#dddddd' lw 0.5 dt 3
set border lc rgb '#444444'
set object 1 rect from graph 0, graph 0 to first 32, graph 1 fc rgb '#f2f2f2' fs solid noborder behind
set arrow 1 from 32, graph 0 to 32, graph 1 nohead lw 1.5 dt 2 lc rgb 'black' front
set label 1 'training length n = 32' at 32, graph 0.5 rotate by 90 center offset -0.9,0 font ',7' front
set lmargin at screen 0.1114
set rmargin at screen 0.3850
set tmargin at screen 0.9360
set bmargin at screen 0.6000
set label 2 'copy: encodings' at screen 0.4519, screen 0.9720 center font ',10'
set ylabel 'exact match (fraction)' font ',8' offset 1.2,0
unset key
plot 'curves_copy.dat' index 0 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#0072B2' notitle, \
     '' index 0 using 1:2 with linespoints lw 1.5 pt 15 ps 0.7 dt 1 lc rgb '#0072B2' title 'alibi', \
     '' index 1 using 1:2 with points pt 6 ps 0.35 lc rgb '#0072B2' notitle, \
     'curves_copy.dat' index 2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#D55E00' notitle, \
     '' index 2 using 1:2 with linespoints lw 1.5 pt 6 ps 0.7 dt 1 lc rgb '#D55E00' title 'rope', \
     '' index 3 using 1:2 with points pt 6 ps 0.35 lc rgb '#D55E00' notitle
set key at screen 0.7886, screen 0.9360 left top reverse Left font ',8' spacing 1.0 samplen 2 maxcols 1
set lmargin at screen 0.5036
set rmargin at screen 0.7771
set tmargin at screen 0.9360
set bmargin at screen 0.6000
unset label 2
set ylabel 'token accuracy (fraction)' font ',8' offset 1.2,0

plot 'curves_copy.dat' index 0 using 1:6:7 with filledcurves fs transparent solid 0.12 noborder lc rgb '#0072B2' notitle, \
     '' index 0 using 1:5 with linespoints lw 1.5 pt 15 ps 0.7 dt 1 lc rgb '#0072B2' title 'alibi', \
     '' index 1 using 1:3 with points pt 6 ps 0.35 lc rgb '#0072B2' notitle, \
     'curves_copy.dat' index 2 using 1:6:7 with filledcurves fs transparent solid 0.12 noborder lc rgb '#D55E00' notitle, \
     '' index 2 using 1:5 with linespoints lw 1.5 pt 6 ps 0.7 dt 1 lc rgb '#D55E00' title 'rope', \
     '' index 3 using 1:3 with points pt 6 ps 0.35 lc rgb '#D55E00' notitle
set lmargin at screen 0.1114
set rmargin at screen 0.3850
set tmargin at screen 0.4360
set bmargin at screen 0.1000
set label 2 'copy: rope and its scaling types' at screen 0.4519, screen 0.4720 center font ',10'
set ylabel 'exact match (fraction)' font ',8' offset 1.2,0
unset key
plot 'curves_copy.dat' index 2 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#D55E00' notitle, \
     '' index 2 using 1:2 with linespoints lw 1.5 pt 6 ps 0.7 dt 1 lc rgb '#D55E00' title 'rope', \
     '' index 3 using 1:2 with points pt 6 ps 0.35 lc rgb '#D55E00' notitle, \
     'curves_copy.dat' index 4 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#E69F00' notitle, \
     '' index 4 using 1:2 with linespoints lw 1.5 pt 5 ps 0.7 dt 1 lc rgb '#E69F00' title 'rope+pi', \
     '' index 5 using 1:2 with points pt 6 ps 0.35 lc rgb '#E69F00' notitle, \
     'curves_copy.dat' index 6 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#56B4E9' notitle, \
     '' index 6 using 1:2 with linespoints lw 1.5 pt 9 ps 0.7 dt 1 lc rgb '#56B4E9' title 'rope+ntk', \
     '' index 7 using 1:2 with points pt 6 ps 0.35 lc rgb '#56B4E9' notitle, \
     'curves_copy.dat' index 8 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#009E73' notitle, \
     '' index 8 using 1:2 with linespoints lw 1.5 pt 11 ps 0.7 dt 1 lc rgb '#009E73' title 'rope+yarn', \
     '' index 9 using 1:2 with points pt 6 ps 0.35 lc rgb '#009E73' notitle, \
     'curves_copy.dat' index 10 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#B59B00' notitle, \
     '' index 10 using 1:2 with linespoints lw 1.5 pt 13 ps 0.7 dt 1 lc rgb '#B59B00' title 'rope+llama3', \
     '' index 11 using 1:2 with points pt 6 ps 0.35 lc rgb '#B59B00' notitle, \
     'curves_copy.dat' index 12 using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '#0072B2' notitle, \
     '' index 12 using 1:2 with linespoints lw 1.5 pt 15 ps 0.7 dt 1 lc rgb '#0072B2' title 'rope+dynamic', \
     '' index 13 using 1:2 with points pt 6 ps 0.35 lc rgb '#0072B2' notitle
set key at screen 0.7886, screen 0.4360 left top reverse Left font ',8' spacing 1.0 samplen 2 maxcols 1
set lmargin at screen 0.5036
set rmargin at screen 0.7771
set tmargin at screen 0.4360
set bmargin at screen 0.1000
unset label 2
set ylabel 'token accuracy (fraction)' font ',8' offset 1.2,0

plot 'curves_copy.dat' index 2 using 1:6:7 with filledcurves fs transparent solid 0.12 noborder lc rgb '#D55E00' notitle, \
     '' index 2 using 1:5 with linespoints lw 1.5 pt 6 ps 0.7 dt 1 lc rgb '#D55E00' title 'rope', \
     '' index 3 using 1:3 with points pt 6 ps 0.35 lc rgb '#D55E00' notitle, \
     'curves_copy.dat' index 4 using 1:6:7 with filledcurves fs transparent solid 0.12 noborder lc rgb '#E69F00' notitle, \
     '' index 4 using 1:5 with linespoints lw 1.5 pt 5 ps 0.7 dt 1 lc rgb '#E69F00' title 'rope+pi', \
     '' index 5 using 1:3 with points pt 6 ps 0.35 lc rgb '#E69F00' notitle, \
     'curves_copy.dat' index 6 using 1:6:7 with filledcurves fs transparent solid 0.12 noborder lc rgb '#56B4E9' notitle, \
     '' index 6 using 1:5 with linespoints lw 1.5 pt 9 ps 0.7 dt 1 lc rgb '#56B4E9' title 'rope+ntk', \
     '' index 7 using 1:3 with points pt 6 ps 0.35 lc rgb '#56B4E9' notitle, \
     'curves_copy.dat' index 8 using 1:6:7 with filledcurves fs transparent solid 0.12 noborder lc rgb '#009E73' notitle, \
     '' index 8 using 1:5 with linespoints lw 1.5 pt 11 ps 0.7 dt 1 lc rgb '#009E73' title 'rope+yarn', \
     '' index 9 using 1:3 with points pt 6 ps 0.35 lc rgb '#009E73' notitle, \
     'curves_copy.dat' index 10 using 1:6:7 with filledcurves fs transparent solid 0.12 noborder lc rgb '#B59B00' notitle, \
     '' index 10 using 1:5 with linespoints lw 1.5 pt 13 ps 0.7 dt 1 lc rgb '#B59B00' title 'rope+llama3', \
     '' index 11 using 1:3 with points pt 6 ps 0.35 lc rgb '#B59B00' notitle, \
     'curves_copy.dat' index 12 using 1:6:7 with filledcurves fs transparent solid 0.12 noborder lc rgb '#0072B2' notitle, \
     '' index 12 using 1:5 with linespoints lw 1.5 pt 15 ps 0.7 dt 1 lc rgb '#0072B2' title 'rope+dynamic', \
     '' index 13 using 1:3 with points pt 6 ps 0.35 lc rgb '#0072B2' notitle
unset multiplot
