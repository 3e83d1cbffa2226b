// Package fill times one write of the heavy-object benchmark in Go, alone: clear a
// map pre-sized for 100,000 entries and insert the same 100,000 keys ("0".."99999",
// values "value-N") as BenchmarkHotSwap's fill and the Rust port's benches/fill.rs.
//
//	cd compare/fill && go test -run '^$' -bench . -count 5
package fill

import (
	"strconv"
	"testing"
)

const entries = 100_000

type kv struct{ k, v string }

func pairs() []kv {
	out := make([]kv, entries)
	for i := range out {
		out[i] = kv{strconv.Itoa(i), "value-" + strconv.Itoa(i)}
	}
	return out
}

func BenchmarkFill(b *testing.B) {
	kvs := pairs()
	m := make(map[string]string, entries)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		clear(m)
		for _, e := range kvs {
			m[e.k] = e.v
		}
	}
	if len(m) != entries {
		b.Fatalf("map holds %d entries, want %d", len(m), entries)
	}
}
