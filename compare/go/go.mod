module poolswap-compare

go 1.25.1

require (
	// The Go original, newest published version (pkg.go.dev: v0.1.5, 2025-12-17).
	github.com/keilerkonzept/poolswap v0.1.5
	// Imported by the original's own _test.go files.
	pgregory.net/rapid v1.2.0
)
