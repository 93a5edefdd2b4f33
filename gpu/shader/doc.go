// Package shader executes LLVM-compiled gfx90a (MI200, GFX9 family) code objects: a decoder and
// llvm-objdump-compatible disassembler for the compute encodings (SOP1/SOP2/SOPK/SOPC/SOPP, SMEM,
// VOP1/VOP2/VOPC/VOP3A/VOP3B/VOP3P with DPP/SDWA decoding, DS, FLAT/GLOBAL/SCRATCH, MUBUF, MIMG), a 64-lane wave
// interpreter, and a dispatch model that builds the initial register state from the code object V3+ kernel
// descriptor as CP/SPI do (AMDGPUUsage "Initial Kernel Execution State").
//
// Model (cu.go, workgroup.go): a Device is a GPU's compute units, each with a budget of wave slots,
// VGPR rows and LDS. The dispatcher admits a dispatch's work-groups in order to CUs of the queue's CU
// mask where they fit; each resident work-group is a goroutine (reused from an ended group when one
// is idle; a goroutine whose group ended admits and runs the next one itself when the admission
// rules allow it, so the dispatcher is woken only when they do not), and a pool of worker tokens (one per host CPU, SetWorkers) decides which run: a
// goroutine runs at most 32K wave instructions per turn of its token, the groups it admits as each
// one ends running in the rest of the same turn (handOver). So the work-groups of a dispatch, and of every queue and GPU, run concurrently: a work-
// group spinning on a flag another one sets, a grid barrier on atomics, a GWS semaphore and a CPU
// thread taking turns with a kernel all make progress. Admission keeps few work-groups resident while
// they finish quickly and fills the CUs when resident ones wait or run long. Within a work-group,
// waves take turns of at most 256 instructions, and a turn ends early at s_barrier, s_sleep and GWS
// waits. Memory accesses complete within their instruction (each lane's access is one load or store,
// atomics are one read-modify-write of the Memory), so s_waitcnt needs no wait; the vector cache
// controls (buffer_wbl2/invl2/wbinvl1) are host memory barriers (vmem.go, STATUS.md). Every global/flat
// access goes through the Memory interface (the GPUVM; PortPool lends each running work-group its own
// window); a failed access stops the dispatch with a *Fault carrying the address. LDS is a per-group
// byte slice; scratch lives in Memory at DispatchParams.ScratchBase with the per-lane dword interleave
// (private segment swizzle): each resident wave owns one slot of ScratchWaveBytes
// (COMPUTE_TMPRING_SIZE.WAVESIZE, as the CP took it from amd_queue_t), its Scratch Wave Offset being
// slot index * slot size; the Private Segment Buffer is DispatchParams.ScratchResource (the queue's
// V#). Errors carry a gpu/aql class for the CP's queue-inactive code (ErrBadDispatch: invalid code, or
// a work-group too large; Fault: memory violation). Preemption (suspend.go): a Suspendable dispatch
// whose context ends parks its resident work-groups at an instruction boundary, their waves, LDS and
// scratch kept and their CUs given back, and Resume continues them exactly (the model's CWSR); other
// dispatches stop admitting at the context's end and finish their resident work-groups, or stop inside
// them when Kill closes. The opcode tables (optab_gen.go) are generated
// from llvm-mc-14 by testdata/gen_optab.py.
//
// Opcodes (optab.go): the generated tables give each opcode an Op (one per mnemonic without _e32/_e64);
// every Op has one record (routine, rounding rule, 16-bit rule) that the units fill by Op constant, so an
// opcode gfx90a lacks does not compile, and fetch binds the record to the decoded instruction once.
//
// Files by unit, in build order: decode.go, optab_gen.go, disasm.go (encodings); wave.go and optab.go
// (registers, operands, per-opcode records); sop.go (SOP1/SOP2/SOPK/SOPC/SOPP: SALU, branches,
// messages), smem.go and kcache.go (SMEM, scalar cache); valu.go (VALU lane loops), vop.go (32/64-bit
// VOP1/VOP2/VOP3), transcendental.go, trigpreop.go, round.go (MODE rounding), valu16.go (16-bit VALU),
// vop3p.go (packed, dot, mix), vopc.go (compares, class), dppsdwa.go, xlane.go (cross-lane and bit
// operations), mfma.go (matrix cores), legacy.go (legacy and graphics-only forms); ds.go (LDS, GWS),
// vmem.go (FLAT/GLOBAL/SCRATCH/MUBUF), mubuf_format.go (typed buffers); mimg.go,
// imagedesc.go and mimg_exec.go (MIMG: image instructions, T#/S# descriptors); cu.go (compute units, worker
// pool, GWS), workgroup.go (admission, work-group and wave scheduling), suspend.go, dispatch.go. STATUS.md
// lists what is implemented, the decisions where the ISA is silent, and the opcodes left.
//
// Lane loops (wave.go, valu.go): an operation with few active lanes visits only those (sources read
// lane by lane, nothing broadcast); with many, the common ones run a loop over all 64 lanes without
// a call per lane and keep the active results (STATUS.md "Speed"); on amd64 with AVX2 and FMA3 the hottest
// of those loops are assembly kernels (simd_amd64.s: f32 add/sub/mul/fma, carry ops, 64-bit
// multiply-add, shifts and compares, 32-bit compares), the Go loops their fallback and reference
// (TestSIMDKernels; -tags purego runs the Go loops alone).
//
// Concurrency and lock order: a Dispatch owns its state. Its work-groups share the decoded code
// (a sync.Map plus atomic links between instructions; codecache.go), which a queue's CodeCache
// keeps for its next dispatches of the kernel once the code in memory has been compared with it
// (CodeCache.mu is taken before codeGraph.mu; neither before another lock), and take dispatch.mu only to record an
// error or return scratch slots and finished groups; an ended dispatch's groups (LDS, waves and
// their register files) are spares for later dispatches, cleared by whoever takes them. dispatch.amu guards admission (the next group,
// taken by the dispatcher and by a goroutine whose group ended) and is taken before dispatch.mu and
// Device.mu. Device.mu guards CU accounting (admission and release only) and GWS.mu its entries;
// neither is held while taking the other or a token. Package
// state written after init: the worker pool (SetWorkers) and the 2/π table of v_trig_preop_f64
// (sync.Once).
package shader
