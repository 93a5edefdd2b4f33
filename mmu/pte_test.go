package mmu

import "testing"

func TestPTEBits(t *testing.T) {
	// Values of amdgpu_vm.h.
	for _, c := range []struct {
		name string
		got  PTE
		want uint64
	}{
		{"VALID", PTEValid, 1 << 0},
		{"SYSTEM", PTESystem, 1 << 1},
		{"SNOOPED", PTESnooped, 1 << 2},
		{"TMZ", PTETMZ, 1 << 3},
		{"EXECUTABLE", PTEExecutable, 1 << 4},
		{"READABLE", PTEReadable, 1 << 5},
		{"WRITEABLE", PTEWriteable, 1 << 6},
		{"FRAG(0x1f)", PTEFrag(0x1f), 0x1f << 7},
		{"FRAG(4)", PTEFrag(4), 4 << 7},
		{"FRAG(33) masked", PTEFrag(33), 1 << 7},
		{"PRT", PTEPRT, 1 << 51},
		{"PDE_PTE", PDEPTE, 1 << 54},
		{"LOG", PTELog, 1 << 55},
		{"TF", PTETF, 1 << 56},
		{"MTYPE_VG10(NC)", PTEMType(MTypeNC), 0},
		{"MTYPE_VG10(RW)", PTEMType(MTypeRW), 1 << 57},
		{"MTYPE_VG10(CC)", PTEMType(MTypeCC), 2 << 57},
		{"MTYPE_VG10(UC)", PTEMType(MTypeUC), 3 << 57},
		{"MTYPE_VG10_MASK", PTEMTypeMask, 3 << 57},
	} {
		if uint64(c.got) != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, uint64(c.got), c.want)
		}
	}
}

func TestPTEString(t *testing.T) {
	for _, c := range []struct {
		p    PTE
		want string
	}{
		{0, "mtype=NC frag=0 pa=0x0"},
		{PTEValid | PTESystem | PTEReadable | PTEWriteable | PTEExecutable | PTEMType(MTypeUC) | PTEFrag(4) | 0x1234000,
			"V S R W X mtype=UC frag=4 pa=0x1234000"},
		{PTEValid | PDEPTE | PTEReadable | PTEMType(MTypeRW) | PTEFrag(9) | 0x10000200000,
			"V R PDE_PTE mtype=RW frag=9 pa=0x10000200000"},
		{PTEValid | PTESnooped | PTETMZ | PTEPRT | PTELog | PTETF | PTEMType(MTypeCC),
			"V SN TMZ PRT LOG TF mtype=CC frag=0 pa=0x0"},
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("%#x: %q, want %q", uint64(c.p), got, c.want)
		}
	}
}
