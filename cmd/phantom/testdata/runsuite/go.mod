module example.com/runsuite

go 1.22
