# Scaling chart of a benchmark run (the part "scaling" of test/bench/run.sh),
# called by run.sh with
#   datadir  directory of chart_scal.dat (million calls/s) and
#            chart_x_loop.dat (ratio to the empty loop): a column "backends",
#            then one column per f measured, its name as the header
#   ncols    number of columns of those files
#   maxb     most backends measured
#   rows     calls per statement
#   outfile  PNG to write
#   subtitle machine and run summary
set terminal pngcairo size 1800,650 font "DejaVu Sans,11" noenhanced
set output outfile
set datafile separator "\t"
set datafile missing "NaN"
set grid xtics ytics mytics lc rgb "#dddddd"
set multiplot layout 1,2 margins 0.05, 0.76, 0.12, 0.82 spacing 0.08 title "idgen scaling: SELECT count(f) FROM generate_series(1, ".rows."), N backends at once\n(".subtitle.")" font ",13"
set logscale x 2
set xrange [0.8:maxb * 1.25]
set xlabel "backends"
set logscale y
set key off

set title "Million calls per second, all backends together\n(log scale; higher is better)"
set ylabel "million calls/s"
plot for [i=2:ncols] datadir."/chart_scal.dat" using 1:i:xtic(1) with linespoints lw 2 pt 7

set title "Share of the empty loop's rate, count(1), at the same backends\n(log scale; 1 = as fast as the loop)"
set ylabel "vs count(1)"
set yrange [*:*]
set key at screen 0.775, 0.5 left center vertical Left reverse autotitle columnheader
plot for [i=2:ncols] datadir."/chart_x_loop.dat" using 1:i:xtic(1) with linespoints lw 2 pt 7
unset multiplot
