package mmu

import (
	"fmt"
	"strings"
)

// PTE is one GFX9 page-table entry or page-directory entry (64 bits), laid out as amdgpu writes it
// (drivers/gpu/drm/amd/amdgpu/amdgpu_vm.h, AMDGPU_PTE_*; gmc_v9_0.c for the GFX9 MTYPE field).
type PTE uint64

// PTE bits (amdgpu_vm.h).
const (
	PTEValid      PTE = 1 << 0  // AMDGPU_PTE_VALID
	PTESystem     PTE = 1 << 1  // AMDGPU_PTE_SYSTEM: address is a system (DMA) address
	PTESnooped    PTE = 1 << 2  // AMDGPU_PTE_SNOOPED
	PTETMZ        PTE = 1 << 3  // AMDGPU_PTE_TMZ (RV+)
	PTEExecutable PTE = 1 << 4  // AMDGPU_PTE_EXECUTABLE
	PTEReadable   PTE = 1 << 5  // AMDGPU_PTE_READABLE
	PTEWriteable  PTE = 1 << 6  // AMDGPU_PTE_WRITEABLE
	PTEPRT        PTE = 1 << 51 // AMDGPU_PTE_PRT (TILED on VEGA10)
	PDEPTE        PTE = 1 << 54 // AMDGPU_PDE_PTE: a PDE handled as a PTE (huge page), VEGA10+
	PTELog        PTE = 1 << 55 // AMDGPU_PTE_LOG
	PTETF         PTE = 1 << 56 // AMDGPU_PTE_TF: PTE handled as PDE (translate further)

	// PTEAddrMask is the physical address field, bits 12..47 (gmc_v9_0_get_vm_pde checks
	// addr & 0xFFFF00000000003F == 0 for PDEs; PTEs are 4 KiB aligned).
	PTEAddrMask PTE = 0x0000_FFFF_FFFF_F000
	// PTEFragMask is AMDGPU_PTE_FRAG(0x1f): bits 7..11.
	PTEFragMask PTE = 0x1f << 7
	// PTEMTypeMask is AMDGPU_PTE_MTYPE_VG10_MASK: bits 57..58.
	PTEMTypeMask PTE = 3 << 57
)

// GFX9 memory types (AMDGPU_MTYPE_NC / AMDGPU_MTYPE_CC in amdgpu_vm.h; MTYPE_RW and MTYPE_UC of
// vega10_enum.h as gmc_v9_0.c uses them; RW is gfx9.4's name for the former WC encoding).
const (
	MTypeNC uint = 0
	MTypeRW uint = 1
	MTypeCC uint = 2
	MTypeUC uint = 3
)

// PTEFrag is AMDGPU_PTE_FRAG(log2): the entry belongs to an aligned, physically contiguous fragment
// of 2^log2 pages of the entry's own size (bits 7..11).
func PTEFrag(log2 uint) PTE { return PTE(log2&0x1f) << 7 }

// PTEMType is AMDGPU_PTE_MTYPE_VG10(m) (bits 57..58).
func PTEMType(m uint) PTE { return PTE(m&3) << 57 }

// Frag returns the fragment field (log2 of the fragment size in pages).
func (p PTE) Frag() uint { return uint(p&PTEFragMask) >> 7 }

// MType returns the GFX9 MTYPE field.
func (p PTE) MType() uint { return uint(p&PTEMTypeMask) >> 57 }

// Addr returns the physical address field.
func (p PTE) Addr() uint64 { return uint64(p & PTEAddrMask) }

var mtypeNames = [4]string{"NC", "RW", "CC", "UC"}

var pteBitNames = []struct {
	bit  PTE
	name string
}{
	{PTEValid, "V"}, {PTESystem, "S"}, {PTESnooped, "SN"}, {PTETMZ, "TMZ"},
	{PTEReadable, "R"}, {PTEWriteable, "W"}, {PTEExecutable, "X"},
	{PTEPRT, "PRT"}, {PDEPTE, "PDE_PTE"}, {PTELog, "LOG"}, {PTETF, "TF"},
}

// String renders the entry for debugfs: the names of the set flag bits, then mtype, frag and pa,
// e.g. "V S R W X mtype=UC frag=4 pa=0x1000".
func (p PTE) String() string {
	var sb strings.Builder
	for _, b := range pteBitNames {
		if p&b.bit != 0 {
			sb.WriteString(b.name)
			sb.WriteByte(' ')
		}
	}
	fmt.Fprintf(&sb, "mtype=%s frag=%d pa=%#x", mtypeNames[p.MType()], p.Frag(), p.Addr())
	return sb.String()
}
