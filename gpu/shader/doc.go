// Package shader executes LLVM-compiled gfx90a (MI200, GFX9 family) code objects: a decoder and
// llvm-objdump-compatible disassembler for the compute encodings (SOP1/SOP2/SOPK/SOPC/SOPP, SMEM,
// VOP1/VOP2/VOPC/VOP3A/VOP3B/VOP3P with DPP/SDWA decoding, DS, FLAT/GLOBAL/SCRATCH, MUBUF), a 64-lane wave
// interpreter, and a dispatch model that builds the initial register state from the code object V3+ kernel
// descriptor as CP/SPI do (AMDGPUUsage "Initial Kernel Execution State").
//
// Model: work-groups run one at a time; the waves of a group run round-robin, each until it reaches
// s_barrier or s_endpgm, so memory is sequentially consistent; s_waitcnt is a no-op and the vector
// cache controls (buffer_wbl2/invl2/wbinvl1) are host memory barriers (mem.go, STATUS.md). Every global/flat access goes through the Memory interface (the GPUVM); a failed access stops
// the dispatch with a *Fault carrying the address. LDS is a per-group byte slice; scratch lives in Memory at
// DispatchParams.ScratchBase with the per-lane dword interleave (private segment swizzle). The opcode tables
// (optab_gen.go) are generated from llvm-mc-14 by testdata/gen_optab.py.
//
// Files by unit: salu.go (SALU, SMEM, branches), valu.go and transcendental.go (32/64-bit VALU), f16.go
// (16-bit VALU, packed, dot, mix), mfma.go (matrix cores), xlane.go (cross-lane and bit operations),
// vopc.go (compares, class), dppsdwa.go, mem.go (vector memory, DS), round.go (MODE rounding),
// trigpreop.go, rare.go and rare_mem.go (legacy, graphics-only and typed-buffer forms). STATUS.md lists
// what is implemented, the decisions where the ISA is silent, and the opcodes left.
//
// Concurrency: a Dispatch call owns all its state; there are no locks, and the only package-level state
// written after init is the 2/π table of v_trig_preop_f64, computed once under a sync.Once. Concurrent
// Dispatch calls are safe if the Memory is.
package shader
