// Package shader executes LLVM-compiled gfx90a (MI200, GFX9 family) code objects: a decoder and
// llvm-objdump-compatible disassembler for the compute encodings (SOP1/SOP2/SOPK/SOPC/SOPP, SMEM,
// VOP1/VOP2/VOPC/VOP3A/VOP3B/VOP3P with DPP/SDWA decoding, DS, FLAT/GLOBAL/SCRATCH, MUBUF), a 64-lane wave
// interpreter, and a dispatch model that builds the initial register state from the code object V3+ kernel
// descriptor as CP/SPI do (AMDGPUUsage "Initial Kernel Execution State").
//
// Model: work-groups run one at a time; the waves of a group run round-robin, each until it reaches
// s_barrier or s_endpgm, so memory is sequentially consistent and s_waitcnt and cache controls are
// no-ops. Every global/flat access goes through the Memory interface (the GPUVM); a failed access stops
// the dispatch with a *Fault carrying the address. LDS is a per-group byte slice; scratch lives in Memory at
// DispatchParams.ScratchBase with the per-lane dword interleave (private segment swizzle). The opcode tables
// (optab_gen.go) are generated from llvm-mc-14 by testdata/gen_optab.py.
//
// Concurrency: a Dispatch call owns all its state; there are no package-level mutable variables after init
// and no locks. Concurrent Dispatch calls are safe if the Memory is.
package shader
