package shader

import "fmt"

// The GFX9 image resource (T#, 8 dwords) and sampler (S#, 4 dwords) as ROCr's image library fills them
// (ROCR-Runtime src/image/image_manager_ai.cpp ImageManagerAi::PopulateImageSrd and PopulateSamplerSrd;
// field positions as Mesa's GFX9 SQ_IMG_RSRC_WORD*/SQ_IMG_SAMP_WORD* register definitions (sid.h,
// S_008F14_* ... S_008F3C_*)). Only the decode lives here; mimg_exec.go uses it.

// Image resource types (T# word 3 TYPE, SQ_RSRC_IMG_*).
const (
	imgType1D        = 8
	imgType2D        = 9
	imgType3D        = 10
	imgTypeCube      = 11
	imgType1DArray   = 12
	imgType2DArray   = 13
	imgType2DMSAA    = 14
	imgType2DMSAAArr = 15
)

// imageRsrc is a decoded T#.
type imageRsrc struct {
	base       uint64 // BASE_ADDRESS (word0, word1[7:0]) in 256-byte units, as bytes
	minLod     uint32 // word1[19:8]
	dfmt, nfmt uint32 // word1 DATA_FORMAT[25:20], NUM_FORMAT[29:26]
	width      uint32 // word2 WIDTH[13:0] + 1
	height     uint32 // word2 HEIGHT[27:14] + 1
	sel        [4]uint32
	baseLevel  uint32 // word3 BASE_LEVEL[15:12]
	lastLevel  uint32 // word3 LAST_LEVEL[19:16]
	swMode     uint32 // word3 SW_MODE[24:20]
	typ        uint32 // word3 TYPE[31:28]
	depth      uint32 // word4 DEPTH[12:0]: depth-1 (3D) or the last array slice (arrays)
	pitch      uint32 // word4 PITCH[28:13] + 1, in elements
	baseArray  uint32 // word5 BASE_ARRAY[12:0]
}

func decodeImageRsrc(d [8]uint32) imageRsrc {
	var r imageRsrc
	r.base = (uint64(d[0]) | uint64(d[1]&0xff)<<32) << 8
	r.minLod = d[1] >> 8 & 0xfff
	r.dfmt, r.nfmt = d[1]>>20&0x3f, d[1]>>26&0xf
	r.width = d[2]&0x3fff + 1
	r.height = d[2]>>14&0x3fff + 1
	for k := range r.sel {
		r.sel[k] = d[3] >> (3 * k) & 7
	}
	r.baseLevel, r.lastLevel = d[3]>>12&0xf, d[3]>>16&0xf
	r.swMode, r.typ = d[3]>>20&0x1f, d[3]>>28
	r.depth = d[4] & 0x1fff
	r.pitch = d[4]>>13&0xffff + 1
	r.baseArray = d[5] & 0x1fff
	return r
}

// dims is the number of coordinates the resource type takes (x, y, z or slice) and whether the last is
// an array slice.
func (r *imageRsrc) dims() (n int, array bool) {
	switch r.typ {
	case imgType1D:
		return 1, false
	case imgType1DArray:
		return 2, true
	case imgType2D:
		return 2, false
	case imgType2DArray, imgTypeCube:
		return 3, true
	case imgType3D:
		return 3, false
	}
	return 0, false
}

// check refuses what the model does not run: buffer and MSAA resource types, mip chains (the
// texel layout below has one level), and formats the conversions of rare_mem.go do not cover.
func (r *imageRsrc) check(store bool, d16 bool) error {
	if n, _ := r.dims(); n == 0 {
		return fmt.Errorf("%w: image resource TYPE %d", ErrUnimplemented, r.typ)
	}
	if r.lastLevel != r.baseLevel {
		return fmt.Errorf("%w: image with mip levels %d..%d", ErrUnimplemented, r.baseLevel, r.lastLevel)
	}
	if r.dfmt >= uint32(len(bufDataFormats)) || r.nfmt > nfFloat {
		return fmt.Errorf("%w: image format DATA_FORMAT=%d NUM_FORMAT=%d", ErrUnimplemented, r.dfmt, r.nfmt)
	}
	return bufCvt(r.dfmt, r.nfmt, store, d16)
}

// elemSize is the texel size in bytes.
func (r *imageRsrc) elemSize() uint64 { return uint64(bufDataFormats[r.dfmt].size) }

// slices is the number of array slices (arrays) or depth (3D) addressable through the descriptor.
func (r *imageRsrc) slices() uint32 {
	n, array := r.dims()
	switch {
	case array && r.depth >= r.baseArray:
		return r.depth - r.baseArray + 1
	case array:
		return 0
	case n == 3:
		return r.depth + 1
	}
	return 1
}

// texelAddr is the address of texel (x, y, z) where z is the depth or the array slice (already
// checked to be in range). Layout (decision, STATUS.md "Images"): linear rows of PITCH elements, slices
// of PITCH*HEIGHT elements, from BASE_ADDRESS, whatever SW_MODE says: ROCr sizes an opaque (tiled) image
// with addrlib, whose pitch (the T# PITCH) and height are padded to the swizzle block, so this layout
// stays inside the allocation; only the shader's image instructions read or write opaque images. A
// linear image (SW_MODE 0: HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR, or an image over a pitched buffer) has
// exactly this layout.
func (r *imageRsrc) texelAddr(x, y, z uint32) uint64 {
	_, array := r.dims()
	if array {
		z += r.baseArray
	}
	row := uint64(z)*uint64(r.height) + uint64(y)
	return r.base + (row*uint64(r.pitch)+uint64(x))*r.elemSize()
}

// Sampler addressing modes (S# word0 CLAMP_X/Y/Z, SQ_TEX_*).
const (
	texWrap             = 0
	texMirror           = 1
	texClampLastTexel   = 2
	texMirrorOnceLast   = 3
	texClampHalfBorder  = 4
	texMirrorOnceHalfBd = 5
	texClampBorder      = 6
	texMirrorOnceBorder = 7
)

// samplerState is a decoded S#.
type samplerState struct {
	clamp        [3]uint32 // word0 CLAMP_X[2:0], CLAMP_Y[5:3], CLAMP_Z[8:6]
	maxAniso     uint32    // word0 MAX_ANISO_RATIO[11:9]
	unnormalized bool      // word0 FORCE_UNNORMALIZED[15]
	filterMode   uint32    // word0 FILTER_MODE[30:29] (0 blend, 1 min, 2 max)
	magFilter    uint32    // word2 XY_MAG_FILTER[21:20] (0 point, 1 bilinear, 2/3 aniso)
	minFilter    uint32    // word2 XY_MIN_FILTER[23:22]
	zFilter      uint32    // word2 Z_FILTER[25:24] (0 none, 1 point, 2 linear)
	mipFilter    uint32    // word2 MIP_FILTER[27:26]
	borderType   uint32    // word3 BORDER_COLOR_TYPE[31:30] (0 transparent black, 1 opaque black, 2 opaque white, 3 register)
}

func decodeSampler(d [4]uint32) samplerState {
	var s samplerState
	for k := range s.clamp {
		s.clamp[k] = d[0] >> (3 * k) & 7
	}
	s.maxAniso = d[0] >> 9 & 7
	s.unnormalized = d[0]>>15&1 != 0
	s.filterMode = d[0] >> 29 & 3
	s.magFilter, s.minFilter = d[2]>>20&3, d[2]>>22&3
	s.zFilter, s.mipFilter = d[2]>>24&3, d[2]>>26&3
	s.borderType = d[3] >> 30
	return s
}

// check refuses the sampler states the model does not run.
func (s *samplerState) check() error {
	switch {
	case s.filterMode != 0:
		return fmt.Errorf("%w: sampler FILTER_MODE %d (min/max reduction)", ErrUnimplemented, s.filterMode)
	case s.maxAniso != 0 || s.magFilter > 1:
		return fmt.Errorf("%w: anisotropic filtering", ErrUnimplemented)
	case s.magFilter != s.minFilter:
		// Which one applies depends on the LOD from the quad's derivatives; ROCr sets both the same.
		return fmt.Errorf("%w: sampler with different min and mag filters", ErrUnimplemented)
	case s.borderType == 3:
		return fmt.Errorf("%w: border color from the border color table", ErrUnimplemented)
	}
	for _, c := range s.clamp {
		if c == texClampHalfBorder || c == texMirrorOnceHalfBd {
			return fmt.Errorf("%w: sampler half-border addressing mode %d", ErrUnimplemented, c)
		}
	}
	return nil
}
