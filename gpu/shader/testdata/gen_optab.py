#!/usr/bin/env python3
# Generates ../optab_gen.go: the gfx90a opcode tables (mnemonic + operand template per encoding and opcode).
# Each opcode of each encoding is assembled with distinctive register numbers in every operand field and
# disassembled with `llvm-mc-14 --disassemble -mcpu=gfx90a`; the register numbers in the output tell which
# field each printed operand comes from and how many dwords it spans. Every distinct mnemonic without its
# _e32/_e64 suffix gets an Op constant (OpVAddF32 for v_add_f32): the interpreter's per-opcode records are
# indexed by it (optab.go), so a routine for an opcode the tables lack does not compile.
# Run: python3 gen_optab.py > ../optab_gen.go (the output is passed through gofmt).
import subprocess, re, sys

out = []  # the encoding tables, printed after the Op constants they use
opids = {}  # base mnemonic -> Go identifier

def run1(ws):
    b = b''.join(w.to_bytes(4, 'little') for w in ws)
    p = subprocess.run(['llvm-mc-14', '--disassemble', '-arch=amdgcn', '-mcpu=gfx90a'],
                       input=' '.join('0x%02x' % x for x in b) + '\n', capture_output=True, text=True)
    outs = [l.strip() for l in p.stdout.splitlines() if l.startswith('\t') and l.strip() != '.text']
    if 'warning' in p.stderr or len(outs) != 1:
        return None
    return outs[0].split('//')[0].strip()

def run(words_list):
    """words_list: list of lists of uint32 (one instruction each). Returns text or None (invalid)."""
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(8) as ex:
        return list(ex.map(run1, words_list))

regre = re.compile(r'^(v|s|a)(\d+)$|^(v|s|a)\[(\d+):(\d+)\]$')

def template(text, fieldmap):
    """fieldmap: {(cls, base): fieldname}. Returns (name, [ (field, width, cls) or literal str ])"""
    if text is None:
        return None
    parts = text.split(None, 1)
    name = parts[0]
    ops = []
    if len(parts) > 1:
        # split on ', ' for operands; trailing modifiers separated by space
        rest = parts[1]
        # the operands end at the first space not following a comma; the modifiers after it may
        # contain commas themselves (op_sel_hi:[1,1,1] of v_fma_mix*)
        m = re.search(r'[^,] ', rest)
        mods = []
        if m:
            mods = rest[m.start() + 2:].split(' ')
            rest = rest[:m.start() + 1]
        toks = [t.strip() for t in rest.split(',')]
        for t in toks:
            m = regre.match(t)
            if m:
                if m.group(1):
                    cls, lo, hi = m.group(1), int(m.group(2)), int(m.group(2))
                else:
                    cls, lo, hi = m.group(3), int(m.group(4)), int(m.group(5))
                key = ('r', lo)
                if key in fieldmap:
                    ops.append((fieldmap[key], hi - lo + 1, cls))
                    continue
            ops.append(t)
        if mods:
            ops.append('|' + ' '.join(mods))
    return name, ops

def base(name):
    for suf in ('_e32', '_e64'):
        if name.endswith(suf):
            return name[:-len(suf)]
    return name

def ident(name):
    return 'Op' + ''.join(p[:1].upper() + p[1:] for p in base(name).split('_'))

def emit(tab, entries):
    print = lambda s: out.append(s)
    print('var %s = map[uint16]opInfo{' % tab)
    for op, (name, ops) in sorted(entries.items()):
        parts = []
        for o in ops:
            if isinstance(o, tuple):
                parts.append('{F: %s, W: %d, C: %r}' % (o[0], o[1], o[2]))
            else:
                parts.append('{Lit: %s}' % ('"' + o.replace('"', '\\"') + '"'))
        b, i = base(name), ident(name)
        if opids.setdefault(b, i) != i or list(opids.values()).count(i) != 1:
            sys.exit('gen_optab: identifier %s of %s is not unique' % (i, b))
        print('\t0x%x: {%s, %s, []opTmpl{%s}},' % (op, '"' + name + '"', i, ', '.join(parts)))
    print('}\n')

def gen(tab, n, enc, fieldmap, variants=None, fix=None):
    """variants: functions mapping the canonical words to alternative encodings with unused fields
    cleared (LLVM rejects encodings whose unused operand fields are non-zero). fix: applied to the
    entries before they are written."""
    ws = [enc(op) for op in range(n)]
    outs = run(ws)
    for var in variants or []:
        idx = [i for i, o in enumerate(outs) if o is None]
        alt = run([var(ws[i]) for i in idx])
        for i, o in zip(idx, alt):
            outs[i] = o
    entries = {}
    for op, t in enumerate(outs):
        tt = template(t, fieldmap)
        if tt:
            entries[op] = tt
    if fix:
        fix(entries)
    emit(tab, entries)
    return entries

S = lambda f: {('r', 40): 'fDst', ('r', 8): 'fSrc0', ('r', 16): 'fSrc1', ('r', 24): 'fSrc2'}
# SOP2: 10 op[29:23] sdst[22:16] ssrc1[15:8] ssrc0[7:0]
gen('tabSOP2', 0x60, lambda op: [(2 << 30) | (op << 23) | (40 << 16) | (16 << 8) | 8], S(0))
# SOPK: 1011 op[27:23] sdst[22:16] simm16
gen('tabSOPK', 0x1d, lambda op: [(0xb << 28) | (op << 23) | (40 << 16) | 0x1234] + ([0x5678] if op == 0x14 else []), S(0))
# SOP1: 101111101 sdst[22:16] op[15:8] ssrc0
gen('tabSOP1', 0x100, lambda op: [(0x17d << 23) | (40 << 16) | (op << 8) | 8], S(0))
# SOPC: 101111110 op[22:16] ssrc1 ssrc0
gen('tabSOPC', 0x80, lambda op: [(0x17e << 23) | (op << 16) | (16 << 8) | 8], S(0))
# SOPP: names only
gen('tabSOPP', 0x80, lambda op: [(0x17f << 23) | (op << 16)], {})
# SMEM: 110000 op[25:18] imm[17] glc[16] ... sdata[12:6] sbase[5:0]; dword2 offset
# s_memtime/s_memrealtime (sdata only) and s_dcache_inv/wb(_vol) (no operand) are valid only with their
# unused fields zero: the variants clear IMM, SBASE and the offset, then SDATA too.
gen('tabSMEM', 0x100, lambda op: [(0x30 << 26) | (op << 18) | (1 << 17) | (40 << 6) | 4, 0x44],
    {('r', 40): 'fDst', ('r', 8): 'fSrc0'},
    [lambda w: [w[0] & ~((1 << 17) | 0x3f), 0], lambda w: [w[0] & ~((1 << 17) | (0x7f << 6) | 0x3f), 0]])
V = {('r', 40): 'fDst', ('r', 8): 'fSrc0', ('r', 16): 'fSrc1', ('r', 24): 'fSrc2', ('r', 0): 'fSDst'}
# VOP2: 0 op[30:25] vdst[24:17] vsrc1[16:9] src0[8:0]
gen('tabVOP2', 0x3e, lambda op: [(op << 25) | (40 << 17) | (16 << 9) | (256 + 8)] + ([0x4000] if op in (0x17, 0x18, 0x24, 0x25) else []), V)
# VOP1: 0111111 vdst[24:17] op[16:9] src0
gen('tabVOP1', 0x100, lambda op: [(0x3f << 25) | (40 << 17) | (op << 9) | (256 + 8)], V)
# VOPC: 0111110 op[24:17] vsrc1 src0
gen('tabVOPC', 0x100, lambda op: [(0x3e << 25) | (op << 17) | (16 << 9) | (256 + 8)], V)
# VOP3: 110100 op[25:16] clamp[15] opsel/abs/sdst[14:8] vdst[7:0]; neg[31:29] omod[28:27] src2[26:18] src1[17:9] src0[8:0]
gen('tabVOP3', 0x380, lambda op: [(0x34 << 26) | (op << 16) | 40, ((256 + 24) << 18) | ((256 + 16) << 9) | (256 + 8)], V,
    [lambda w: [w[0], w[1] & 0x3ffff], lambda w: [w[0], w[1] & 0x1ff], lambda w: [w[0] & ~0xff, w[1] & 0x3ffff], lambda w: [w[0] & ~0xff, w[1] & 0x1ff], lambda w: [w[0] & ~0xff, 0]])
# VOP3P: 110100111 op[22:16] clamp[15] op_sel_hi2[14] op_sel[13:11] neg_hi[10:8] vdst; neg[31:29] op_sel_hi[28:27] src2 src1 src0
gen('tabVOP3P', 0x80, lambda op: [(0x1a7 << 23) | (op << 16) | (1 << 14) | 40, (3 << 27) | ((256 + 24) << 18) | ((256 + 16) << 9) | (256 + 8)], V,
    [lambda w: [w[0] & ~(1 << 14), w[1] & ~(0x1ff << 18)], lambda w: [w[0], w[1] & (0x1ff | (3 << 27))]])
D = {('r', 40): 'fDst', ('r', 8): 'fAddr', ('r', 16): 'fData0', ('r', 24): 'fData1'}
def ds_fields(entries):
    """The variants that clear DATA1 print it as v0, which the template cannot tell from a constant: the
    operand after data0 is data1 (data0's width); ds_write_addtid_b32's lone v0 is data0."""
    for name, ops in entries.values():
        if len(ops) == 3 and isinstance(ops[1], tuple) and ops[1][0] == 'fData0' and ops[2] in ('v0', 'v[0:1]'):
            ops[2] = ('fData1', ops[1][1], 'v')
        elif len(ops) == 1 and ops[0] == 'v0':
            ops[0] = ('fData0', 1, 'v')
# DS: 110110 acc[25] op[24:17] gds[16] offset1 offset0 ; vdst[31:24] data1[23:16] data0[15:8] addr[7:0]
gen('tabDS', 0x100, lambda op: [(0x36 << 26) | (op << 17), (40 << 24) | (24 << 16) | (16 << 8) | 8], D,
    [lambda w: [w[0], w[1] & ~(0xff << 16)], lambda w: [w[0], w[1] & 0xff00ffff & ~(0xff << 24)], lambda w: [w[0], w[1] & 0xffff], lambda w: [w[0], w[1] & 0xff0000ff], lambda w: [w[0], w[1] & 0xff], lambda w: [w[0], w[1] & 0xff00], lambda w: [w[0], w[1] & 0xff000000], lambda w: [w[0], 0],
     # GDS-only operations: ds_gws_init/barrier/sema_br (their data0 is encoded in the ADDR field),
     # ds_gws_sema_v/p/release_all, ds_ordered_count
     lambda w: [w[0] | (1 << 16), w[1] & 0xff], lambda w: [w[0] | (1 << 16), 0],
     lambda w: [w[0] | (1 << 16), w[1] & 0xff0000ff]], ds_fields)
F = {('r', 40): 'fDst', ('r', 8): 'fAddr', ('r', 16): 'fData0', ('r', 20): 'fSAddr'}
# FLAT: 110111 op[24:18] slc[17] glc[16] seg[15:14] lds[13] offset[12:0]; vdst[31:24] nv[23] saddr[22:16] data[15:8] addr[7:0]
fl = lambda seg, saddr: (lambda op: [(0x37 << 26) | (op << 18) | (seg << 14), (40 << 24) | (saddr << 16) | (16 << 8) | 8])
FV = [lambda w: [w[0], w[1] & ~(0xff << 24)], lambda w: [w[0], w[1] & ~(0xff << 8)]]
gen('tabFLAT', 0x80, fl(0, 0), F, FV)
gen('tabSCRATCH', 0x80, fl(1, 0x7f), F, FV)
gen('tabSCRATCHS', 0x80, fl(1, 20), F, FV)
gen('tabGLOBAL', 0x80, fl(2, 0x7f), F, FV)
gen('tabGLOBALS', 0x80, fl(2, 20), F, FV)
# MUBUF: 111000 op[24:18] slc[17] lds[16] scc[15] glc[14] idxen[13] offen[12] offset[11:0];
#        soffset[31:24] tfe/acc[23] srsrc[20:16] vdata[15:8] vaddr[7:0]
M = {('r', 40): 'fDst', ('r', 8): 'fAddr', ('r', 16): 'fData0', ('r', 20): 'fSAddr', ('r', 3): 'fSrc0'}
# The cache controls (buffer_wbl2, buffer_invl2, buffer_wbinvl1(_vol)) have no operand: the variant clears
# every field but the opcode.
gen('tabMUBUF', 0x80, lambda op: [(0x38 << 26) | (op << 18) | (1 << 12), (3 << 24) | (5 << 16) | (16 << 8) | 8], M,
    [lambda w: [w[0] & ~0x3ffff, 0]])
# MIMG (gfx90a): 111100 slc[25] op[24:18] lwe[17] acc[16] a16[15] da[14] glc[13] unorm[12] dmask[11:8];
#                d16[31] ssamp[25:21] srsrc[20:16] vdata[15:8] vaddr[7:0]
# The canonical encoding has dmask 0x1 and ssamp s[16:19]; the variant clears ssamp (LLVM rejects a
# non-zero SSAMP on the instructions without a sampler).
G = {('r', 40): 'fData0', ('r', 24): 'fAddr', ('r', 8): 'fSAddr', ('r', 16): 'fSrc1'}
mimg = lambda op: [(0x3c << 26) | (op << 18) | (1 << 8), (4 << 21) | (2 << 16) | (40 << 8) | 24]
mi = gen('tabMIMG', 0x80, mimg, G, [lambda w: [w[0], w[1] & ~(0x1f << 21)]])
# LLVM prints VDATA with as many registers as the DMASK (and D16) select when the opcode has a variant
# of that width, and the canonical width otherwise (its MIMG conversion, AMDGPUDisassembler::convertMIMGInst);
# some DMASK/D16 pairs are rejected. mimgVData[op][d16][dmask] is the printed width, 0 when invalid.
jobs = []
for op in sorted(mi):
    for d16 in (0, 1):
        for dm in range(16):
            w = mimg(op)
            w[0] = w[0] & ~(0xf << 8) | (dm << 8)
            w[1] |= d16 << 31
            if 'ssamp' not in mi[op][0] and not any(isinstance(o, tuple) and o[0] == 'fSrc1' for o in mi[op][1]):
                w[1] &= ~(0x1f << 21)
            jobs.append(w)
outs = run(jobs)
out.append('var mimgVData = map[uint16][2][16]uint8{')
k = 0
for op in sorted(mi):
    rows = []
    for d16 in (0, 1):
        ws = []
        for dm in range(16):
            t = template(outs[k], G)
            k += 1
            ws.append(str([o[1] for o in t[1] if isinstance(o, tuple) and o[0] == 'fData0'][0]) if t else '0')
        rows.append('{' + ', '.join(ws) + '}')
    out.append('\t0x%x: {%s},' % (op, ', '.join(rows)))
out.append('}\n')

def finish():
    names = sorted(opids)
    src = ['// Code generated by testdata/gen_optab.py from llvm-mc-14 -mcpu=gfx90a; DO NOT EDIT.\n',
           'package shader\n',
           '// Op names a gfx90a operation: a mnemonic of the encoding tables below without its _e32/_e64',
           '// suffix. The interpreter binds its per-opcode record (optab.go) by Op.',
           'type Op uint16\n', 'const (', '\tOpInvalid Op = iota']
    src += ["\t" + opids[n] for n in names]
    src += ['\tNumOps // number of Op values, OpInvalid included', ')\n',
            '// opNames gives the mnemonic (without _e32/_e64) of each Op.',
            'var opNames = [NumOps]string{']
    src += ["\t%s: \"%s\"," % (opids[n], n) for n in names]
    src += ['}\n'] + out
    p = subprocess.run(['gofmt'], input='\n'.join(src) + '\n', capture_output=True, text=True, check=True)
    sys.stdout.write(p.stdout)

finish()
