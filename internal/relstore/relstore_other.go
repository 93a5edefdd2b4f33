//go:build !amd64 || race

package relstore

import "sync/atomic"

// Store32 stores v to *p (sequentially consistent: at least release order).
func Store32(p *atomic.Uint32, v uint32) { p.Store(v) }

// Store64 stores v to *p (sequentially consistent: at least release order).
func Store64(p *atomic.Uint64, v uint64) { p.Store(v) }
