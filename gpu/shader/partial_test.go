package shader

import "testing"

// TestPartialGroups3D: a grid whose sizes are not multiples of the work-group's in any dimension
// ends in partial groups (HSA: the last group of each dimension has the remainder). Every
// work-item runs exactly once with its own ids, and a partial group's work-items are packed
// densely by its own shape, x fastest (lane = flat local id mod 64), as the SPI packs a group of
// NUM_THREAD_PARTIAL. Laid out by the full shape (as before), a group partial in x that spans y or z
// needed more waves than its work-item count gives it, and the work-items of the missing waves never
// ran (33x3x3 groups over 100x7x3: 216 of 2100).
func TestPartialGroups3D(t *testing.T) {
	l := load(t)
	grid := [3]uint32{100, 7, 3}
	for _, wg := range [][3]uint16{{16, 4, 2}, {64, 2, 2}, {8, 8, 1}, {33, 3, 3}} {
		n := int(grid[0] * grid[1] * grid[2])
		out := l.put(make([]uint32, 3*n))
		l.run(t, "ids3d", grid, wg, args(out, grid[0], grid[1]))
		got := make([]uint32, 3*n)
		l.get(out, got)
		bad := 0
		for z := range int(grid[2]) {
			for y := range int(grid[1]) {
				for x := range int(grid[0]) {
					pos := [3]int{x, y, z}
					var lid, gid, sz [3]int
					for d := range 3 {
						w := int(wg[d])
						gid[d], lid[d] = pos[d]/w, pos[d]%w
						sz[d] = min(w, int(grid[d])-gid[d]*w) // the partial group's own size
					}
					flat := lid[0] + sz[0]*(lid[1]+sz[1]*lid[2])
					want := [3]uint32{
						uint32(lid[0] | lid[1]<<10 | lid[2]<<20),
						uint32(gid[0] | gid[1]<<10 | gid[2]<<20),
						uint32(flat%lanes + 1),
					}
					o := got[3*((z*int(grid[1])+y)*int(grid[0])+x):][:3]
					if [3]uint32(o) != want {
						if bad++; bad <= 5 {
							t.Errorf("wg %v: work-item (%d,%d,%d): ids %#x group %#x lane+1 %d, want %#x %#x %d",
								wg, x, y, z, o[0], o[1], o[2], want[0], want[1], want[2])
						}
					}
				}
			}
		}
		if bad > 0 {
			t.Errorf("wg %v: %d of %d work-items wrong", wg, bad, n)
		}
	}
}
