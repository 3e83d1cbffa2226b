//go:build tools

// Package compare only pins the Go original so that `go mod tidy` keeps it in
// go.mod. It is never compiled: run.sh runs the benchmark that ships inside the
// module itself (`go test github.com/keilerkonzept/poolswap`).
package compare

import (
	_ "github.com/keilerkonzept/poolswap"
	// The module's own tests import rapid, so `go test` on it needs rapid in go.sum.
	_ "pgregory.net/rapid"
)
