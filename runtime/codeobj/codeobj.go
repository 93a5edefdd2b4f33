// Package codeobj reads AMDGPU HSA code objects (ELF64, EM_AMDGPU, ELFOSABI_AMDGPU_HSA, code object
// V4/V5 as LLVM's AMDGPUUsage describes them): the target from e_flags, the NT_AMDGPU_METADATA
// note (msgpack) with its kernels and their arguments, the loadable segments, the dynamic
// relocations, and the kernel descriptor symbols (NAME.kd). It does not touch any device: Image
// lays the segments out in memory at a base address, relocated, ready to be copied into a GPU
// buffer, and the runtime then dispatches base + the descriptor's offset.
//
// It uses debug/elf for ELF and github.com/vmihailenco/msgpack/v5 for the metadata. Every input is
// untrusted: sizes and offsets are checked, and a malformed object is an error (FuzzParse).
package codeobj

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
)

// ELF constants of AMDGPUUsage ("ELF Code Object").
const (
	elfOSABIAMDGPUHSA = 64
	ntAMDGPUMetadata  = 32      // NT_AMDGPU_METADATA
	efMachMask        = 0x0ff   // EF_AMDGPU_MACH
	rAMDGPUAbs64      = 3       // R_AMDGPU_ABS64: S + A
	rAMDGPURelative64 = 13      // R_AMDGPU_RELATIVE64: B + A
	maxImage          = 1 << 30 // a larger loaded image is refused
	kernelDescSize    = 64
)

// ErrFormat is wrapped by every error about a malformed or unsupported code object.
var ErrFormat = errors.New("codeobj: not a loadable AMDGPU HSA code object")

// machNames maps EF_AMDGPU_MACH values to processor names (AMDGPUUsage, "AMDGPU ELF Header").
var machNames = map[uint32]string{
	0x02c: "gfx900", 0x02f: "gfx906", 0x030: "gfx908", 0x03f: "gfx90a", 0x040: "gfx90c",
	0x04c: "gfx942", 0x036: "gfx1030", 0x041: "gfx1100", 0x02d: "gfx902", 0x031: "gfx909",
}

// Arg is one kernel argument of the metadata (.args).
type Arg struct {
	Name      string `msgpack:".name"`
	TypeName  string `msgpack:".type_name"`
	Size      uint32 `msgpack:".size"`
	Offset    uint32 `msgpack:".offset"`
	ValueKind string `msgpack:".value_kind"`
	AddrSpace string `msgpack:".address_space"`
}

// Kernel is one kernel of the metadata (amdhsa.kernels) with the offset of its descriptor.
type Kernel struct {
	Name                 string `msgpack:".name"`
	Symbol               string `msgpack:".symbol"`
	KernargSegmentSize   uint32 `msgpack:".kernarg_segment_size"`
	KernargSegmentAlign  uint32 `msgpack:".kernarg_segment_align"`
	GroupSegmentSize     uint32 `msgpack:".group_segment_fixed_size"`
	PrivateSegmentSize   uint32 `msgpack:".private_segment_fixed_size"`
	WavefrontSize        uint32 `msgpack:".wavefront_size"`
	SGPRCount            uint32 `msgpack:".sgpr_count"`
	VGPRCount            uint32 `msgpack:".vgpr_count"`
	MaxFlatWorkgroupSize uint32 `msgpack:".max_flat_workgroup_size"`
	Args                 []Arg  `msgpack:".args"`

	// DescriptorOffset is the kernel descriptor's address relative to the image base.
	DescriptorOffset uint64 `msgpack:"-"`
}

type metadata struct {
	Version []int    `msgpack:"amdhsa.version"`
	Target  string   `msgpack:"amdhsa.target"`
	Kernels []Kernel `msgpack:"amdhsa.kernels"`
}

type segment struct {
	vaddr uint64
	data  []byte // file bytes (len <= memsz)
	memsz uint64
	exec  bool
}

type reloc struct {
	off, typ uint64
	sym      uint64 // symbol value (ABS64)
	addend   int64
}

// Object is a parsed code object.
type Object struct {
	Processor string // e.g. "gfx90a", from e_flags
	Flags     uint32 // e_flags
	ABI       uint8  // EI_ABIVERSION: 2 = code object V4, 3 = V5
	Target    string // amdhsa.target from the metadata (e.g. "amdgcn-amd-amdhsa--gfx90a")
	Version   []int  // amdhsa.version
	Kernels   []Kernel
	// Size is the span of the loaded image (highest segment end), page aligned.
	Size uint64

	segs   []segment
	relocs []reloc
}

// Parse reads a code object from its bytes.
func Parse(b []byte) (*Object, error) {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB || f.Machine != elf.EM_AMDGPU || f.OSABI != elfOSABIAMDGPUHSA {
		return nil, fmt.Errorf("%w: class %v data %v machine %v osabi %d", ErrFormat, f.Class, f.Data, f.Machine, f.OSABI)
	}
	if f.Type != elf.ET_DYN {
		return nil, fmt.Errorf("%w: type %v (a linked shared object is needed)", ErrFormat, f.Type)
	}
	o := &Object{ABI: f.ABIVersion}
	if len(b) >= 52 {
		o.Flags = binary.LittleEndian.Uint32(b[48:52])
	}
	o.Processor = machNames[o.Flags&efMachMask]
	if o.Processor == "" {
		return nil, fmt.Errorf("%w: unknown EF_AMDGPU_MACH %#x", ErrFormat, o.Flags&efMachMask)
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		if p.Filesz > p.Memsz || p.Memsz > maxImage || p.Vaddr > maxImage || p.Vaddr+p.Memsz > maxImage {
			return nil, fmt.Errorf("%w: segment at %#x: %d file bytes, %d in memory", ErrFormat, p.Vaddr, p.Filesz, p.Memsz)
		}
		data := make([]byte, p.Filesz)
		if _, err := p.ReadAt(data, 0); err != nil {
			return nil, fmt.Errorf("%w: segment at %#x: %v", ErrFormat, p.Vaddr, err)
		}
		o.segs = append(o.segs, segment{vaddr: p.Vaddr, data: data, memsz: p.Memsz, exec: p.Flags&elf.PF_X != 0})
		o.Size = max(o.Size, p.Vaddr+p.Memsz)
	}
	if len(o.segs) == 0 {
		return nil, fmt.Errorf("%w: no loadable segment", ErrFormat)
	}
	o.Size = (o.Size + 4095) &^ 4095
	if err := o.readMetadata(f); err != nil {
		return nil, err
	}
	if err := o.readRelocs(f); err != nil {
		return nil, err
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		return nil, fmt.Errorf("%w: dynamic symbols: %v", ErrFormat, err)
	}
	kd := map[string]uint64{}
	for _, s := range syms {
		if strings.HasSuffix(s.Name, ".kd") {
			kd[s.Name] = s.Value
		}
	}
	for i := range o.Kernels {
		k := &o.Kernels[i]
		sym := k.Symbol
		if sym == "" {
			sym = k.Name + ".kd"
		}
		off, ok := kd[sym]
		if !ok || off+kernelDescSize > o.Size || off%64 != 0 {
			return nil, fmt.Errorf("%w: kernel %q: descriptor symbol %q missing or misplaced", ErrFormat, k.Name, sym)
		}
		k.DescriptorOffset = off
		if k.KernargSegmentSize > 1<<20 {
			return nil, fmt.Errorf("%w: kernel %q: kernarg segment of %d bytes", ErrFormat, k.Name, k.KernargSegmentSize)
		}
	}
	sort.Slice(o.Kernels, func(i, j int) bool { return o.Kernels[i].Name < o.Kernels[j].Name })
	return o, nil
}

// readMetadata decodes the NT_AMDGPU_METADATA note ("AMDGPU" owner) of the PT_NOTE segments.
func (o *Object) readMetadata(f *elf.File) error {
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE || p.Filesz > 1<<20 {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			return fmt.Errorf("%w: note segment: %v", ErrFormat, err)
		}
		for len(b) >= 12 {
			namesz, descsz, typ := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:])
			nameEnd := 12 + uint64(namesz+3)&^3
			descEnd := nameEnd + uint64(descsz+3)&^3
			if nameEnd > uint64(len(b)) || nameEnd+uint64(descsz) > uint64(len(b)) {
				return fmt.Errorf("%w: truncated note", ErrFormat)
			}
			name := strings.TrimRight(string(b[12:12+namesz]), "\x00")
			if name == "AMDGPU" && typ == ntAMDGPUMetadata {
				var md metadata
				if err := msgpack.Unmarshal(b[nameEnd:nameEnd+uint64(descsz)], &md); err != nil {
					return fmt.Errorf("%w: metadata: %v", ErrFormat, err)
				}
				o.Target, o.Version, o.Kernels = md.Target, md.Version, md.Kernels
				return nil
			}
			if descEnd >= uint64(len(b)) {
				break
			}
			b = b[descEnd:]
		}
	}
	return fmt.Errorf("%w: no NT_AMDGPU_METADATA note", ErrFormat)
}

// readRelocs reads the RELA dynamic relocations (.rela.dyn).
func (o *Object) readRelocs(f *elf.File) error {
	for _, s := range f.Sections {
		if s.Type != elf.SHT_RELA {
			continue
		}
		if s.Size > 1<<24 || s.Entsize != 0 && s.Entsize != 24 {
			return fmt.Errorf("%w: relocation section %s", ErrFormat, s.Name)
		}
		data, err := s.Data()
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrFormat, s.Name, err)
		}
		var syms []elf.Symbol
		if s.Link != 0 {
			syms, _ = f.DynamicSymbols()
		}
		for i := 0; i+24 <= len(data); i += 24 {
			off := binary.LittleEndian.Uint64(data[i:])
			info := binary.LittleEndian.Uint64(data[i+8:])
			r := reloc{off: off, typ: info & 0xffffffff, addend: int64(binary.LittleEndian.Uint64(data[i+16:]))}
			if symIdx := info >> 32; symIdx != 0 {
				if symIdx-1 >= uint64(len(syms)) {
					return fmt.Errorf("%w: relocation against symbol %d of %d", ErrFormat, symIdx, len(syms))
				}
				r.sym = syms[symIdx-1].Value
			}
			if r.typ != rAMDGPUAbs64 && r.typ != rAMDGPURelative64 {
				return fmt.Errorf("%w: relocation type %d not supported", ErrFormat, r.typ)
			}
			if off+8 > o.Size {
				return fmt.Errorf("%w: relocation at %#x outside the image", ErrFormat, off)
			}
			o.relocs = append(o.relocs, r)
		}
	}
	return nil
}

// Image returns the loaded image (Size bytes) for load address base: segments copied, the rest
// zero, dynamic relocations applied.
func (o *Object) Image(base uint64) []byte {
	img := make([]byte, o.Size)
	for _, s := range o.segs {
		copy(img[s.vaddr:], s.data)
	}
	for _, r := range o.relocs {
		v := uint64(int64(base) + r.addend)
		if r.typ == rAMDGPUAbs64 {
			v = uint64(int64(base+r.sym) + r.addend)
		}
		binary.LittleEndian.PutUint64(img[r.off:], v)
	}
	return img
}

// Kernel returns the kernel named name.
func (o *Object) Kernel(name string) (*Kernel, bool) {
	for i := range o.Kernels {
		if o.Kernels[i].Name == name {
			return &o.Kernels[i], true
		}
	}
	return nil, false
}
