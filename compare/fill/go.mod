module poolswap.example/compare/fill

go 1.22
