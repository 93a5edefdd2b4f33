package svm

// span is an inclusive interval of page numbers.
type span struct{ s, l uint64 }

// pageSet is a sorted set of disjoint, non-adjacent page intervals: the pages of a range that
// live in VRAM (prange->vram_pages and the SVM_RANGE_VRAM_DOMAIN bits of prange->dma_addr).
type pageSet []span

func (p pageSet) count() uint64 {
	var n uint64
	for _, x := range p {
		n += x.l - x.s + 1
	}
	return n
}

// within counts the pages of p inside [s, l].
func (p pageSet) within(s, l uint64) uint64 {
	var n uint64
	for _, x := range p {
		a, b := max(x.s, s), min(x.l, l)
		if a <= b {
			n += b - a + 1
		}
	}
	return n
}

// add inserts [s, l] and returns how many pages were not in p before.
func (p *pageSet) add(s, l uint64) uint64 {
	added := l - s + 1 - p.within(s, l)
	out := make(pageSet, 0, len(*p)+1)
	inserted := false
	for _, x := range *p {
		switch {
		case x.l+1 < s:
			out = append(out, x)
		case x.s > l+1:
			if !inserted {
				out = append(out, span{s, l})
				inserted = true
			}
			out = append(out, x)
		default: // overlapping or adjacent: merge
			s, l = min(s, x.s), max(l, x.l)
		}
	}
	if !inserted {
		out = append(out, span{s, l})
	}
	*p = out
	return added
}

// remove deletes [s, l] and returns how many pages were removed.
func (p *pageSet) remove(s, l uint64) uint64 {
	var removed uint64
	out := (*p)[:0:0]
	for _, x := range *p {
		if x.l < s || x.s > l {
			out = append(out, x)
			continue
		}
		if x.s < s {
			out = append(out, span{x.s, s - 1})
		}
		if x.l > l {
			out = append(out, span{l + 1, x.l})
		}
		removed += min(x.l, l) - max(x.s, s) + 1
	}
	*p = out
	return removed
}

// clip returns a copy of the part of p inside [s, l].
func (p pageSet) clip(s, l uint64) pageSet {
	var out pageSet
	for _, x := range p {
		a, b := max(x.s, s), min(x.l, l)
		if a <= b {
			out = append(out, span{a, b})
		}
	}
	return out
}
