# Chart of a benchmark run; called by test/bench/run.sh with
#   datadir  directory of the chart_*.dat files
#   outfile  PNG to write
#   subtitle machine and run summary
set terminal pngcairo size 1500,1500 font "DejaVu Sans,11" noenhanced
set output outfile
set datafile separator "\t"
set style fill solid 0.8 border -1
set boxwidth 0.6
set grid ytics lc rgb "#dddddd"
set key noautotitle
set multiplot layout 3,2 title "idgen benchmark (".subtitle.")" font ",13"

# 1. Single backend: net ns per ID, min-max as error bars
set title "Single backend: ns per ID, count(f()) net of the loop\n(lower is better; burst: runs ahead of the wall clock)"
set ylabel "ns per ID"
set yrange [0:*]
set xtics rotate by -25 nomirror
set xrange [-0.6:*]
set rmargin 8
set offsets 0, 0, graph 0.08, 0
plot datadir."/chart_single.dat" using 0:2:xtic(1) with boxes lc rgb "#4e79a7", \
     "" using 0:2:3:4 with yerrorbars lc rgb "black" pt 0, \
     "" using 0:2:(sprintf("%.0f", $2)) with labels offset 0,0.8

# 2. pgbench TPS by clients
set title "pgbench -M prepared, SELECT f():\nTPS by clients: 1, 2, 4, 8 (higher is better)"
set ylabel "transactions per second"
unset xlabel
set xtics norotate 1,2,8
set logscale x 2
set xrange [0.8:10]
set offsets 0, 0, graph 0.05, 0
set key outside below center horizontal maxcols 3 autotitle columnheader
plot for [i=2:tps_cols] datadir."/chart_tps.dat" using 1:i with linespoints lw 2 pt 7
unset logscale x
unset xlabel
set offsets 0, 0, 0, 0
set key noautotitle

# 3. Insert time, PK index size as labels
set title "INSERT ".rows." rows, PK defaulting to the generator:\nseconds (label: PK index MB)"
set ylabel "seconds"
set xtics rotate by -25
set xrange [-0.6:*]
set yrange [0:*]
set offsets 0, 0, graph 0.1, 0
plot datadir."/chart_ins.dat" using 0:2:xtic(1) with boxes lc rgb "#f28e2b", \
     "" using 0:2:(sprintf("%.2f s, %.0f MB", $2, $3)) with labels offset 0,0.8

# 4. Latency percentiles, log scale
set title "Latency from pgbench --log, 1 client\n(µs, log scale)"
set ylabel "µs"
set logscale y
set yrange [*:*]
set style data histograms
set style histogram clustered gap 1
set boxwidth 0.9 relative
set offsets 0, 0, 0, 0
set xtics rotate by -15
set rmargin 12
set key inside top left horizontal
plot datadir."/chart_lat.dat" using 2:xtic(1) title "p50" lc rgb "#59a14f", \
     "" using 3 title "p99" lc rgb "#edc948", \
     "" using 4 title "p99.9" lc rgb "#e15759"

# 5. Rate held to the clock and without a limit, by loop and backends
unset logscale y
set title "Snowflake IDs/s by backends (1, 2, 4):\nheld to the clock (max_lead 0) vs no limit,\ntwo loops; dashed: the layout's limit"
set ylabel "IDs per second"
unset xlabel
set yrange [0:*]
set format y "%.0s%c"
set offsets 0, 0, graph 0.05, 0
set xtics norotate
set rmargin 36
set key outside right top vertical
plot datadir."/chart_rate.dat" using 2:xtic(1) title columnheader(2) lc rgb "#4e79a7", \
     "" using 3 title columnheader(3) lc rgb "#a0cbe8", \
     "" using 4 title columnheader(4) lc rgb "#f28e2b", \
     "" using 5 title columnheader(5) lc rgb "#ffbe7d", \
     layout_max with lines lw 2 dt 2 lc rgb "#e15759" title "layout limit (4,096,000/s)"
unset multiplot
