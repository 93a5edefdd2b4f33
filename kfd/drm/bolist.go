package drm

import (
	"syscall"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// BO lists (amdgpu_bo_list.c, Linux 6.10): the objects a command submission uses, named by handle.

// boList is an amdgpu_bo_list: it holds a reference to each object (listed once however often the
// client named it; amdgpu keeps duplicates, which changes nothing the client can see).
type boList struct{ bos []*gemBO }

func (l *boList) release(f *File) {
	for _, bo := range l.bos {
		bo.put(f)
	}
	l.bos = nil
}

// readBOListEntries reads the entry array of in as amdgpu_bo_create_list_entry_array does:
// bo_number entries bo_info_size bytes apart, of which the first min(bo_info_size, 8) bytes are the
// entry (the rest zero). The array must fit kvmalloc (ENOMEM) and be readable (EFAULT). visit, if
// not nil, gets the entries in batches, in order; an errno it returns ends the walk.
func readBOListEntries(m Memory, in *abi.DRMAmdgpuBOListIn, visit func([]abi.DRMAmdgpuBOListEntry) syscall.Errno) syscall.Errno {
	const esize = abi.SizeofDRMAmdgpuBOListEntry
	n, stride := uint64(in.BONumber), uint64(in.BOInfoSize)
	if n*esize > 1<<31-1 { // kvmalloc_array's INT_MAX
		return syscall.ENOMEM
	}
	take := min(stride, esize)
	const batch = 4096
	raw := make([]byte, min(n, batch)*esize)
	ents := make([]abi.DRMAmdgpuBOListEntry, 0, min(n, batch))
	for i := uint64(0); i < n; {
		k := min(n-i, batch)
		base := in.BOInfoPtr + i*stride // user pointer arithmetic wraps as in the kernel
		ents = ents[:0]
		var one [esize]byte
		if stride == esize || stride < esize && take > 0 {
			// Contiguous: one read.
			b := raw[:k*stride]
			if m.ReadMemory(base, b) != nil {
				return syscall.EFAULT
			}
			for j := uint64(0); j < k; j++ {
				clear(one[:])
				copy(one[:], b[j*stride:j*stride+take])
				ents = append(ents, entryOf(one))
			}
		} else {
			for j := uint64(0); j < k; j++ {
				clear(one[:])
				if take > 0 && m.ReadMemory(base+j*stride, one[:take]) != nil {
					return syscall.EFAULT
				}
				ents = append(ents, entryOf(one))
			}
		}
		if visit != nil {
			if errno := visit(ents); errno != 0 {
				return errno
			}
		}
		i += k
	}
	return 0
}

func entryOf(b [abi.SizeofDRMAmdgpuBOListEntry]byte) abi.DRMAmdgpuBOListEntry {
	return abi.DRMAmdgpuBOListEntry{BOHandle: le32(b[:], 0), BOPriority: le32(b[:], 4)}
}

// newBOList is amdgpu_bo_list_create over the entries of in, which the caller read once already
// (readBOListEntries without visit: its ENOMEM and EFAULT come first). An entry naming no object is
// ENOENT.
func (f *File) newBOList(m Memory, in *abi.DRMAmdgpuBOListIn) (*boList, syscall.Errno) {
	l := &boList{}
	seen := map[*gemBO]bool{}
	errno := readBOListEntries(m, in, func(ents []abi.DRMAmdgpuBOListEntry) syscall.Errno {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, e := range ents {
			bo, ok := f.bos.get(e.BOHandle)
			if !ok || !f.usable() {
				return f.reject(m, syscall.ENOENT, "BO list: no such handle", "handle", e.BOHandle)
			}
			if !seen[bo] {
				seen[bo] = true
				l.bos = append(l.bos, bo.get())
			}
		}
		return 0
	})
	if errno != 0 {
		l.release(f)
		return nil, errno
	}
	return l, 0
}

// boListIoctl is amdgpu_bo_list_ioctl. The entry array is read for every operation first;
// DESTROY of an unknown handle succeeds, UPDATE of one is ENOENT.
func (f *File) boListIoctl(m Memory, a *abi.DRMAmdgpuBOList) syscall.Errno {
	in := abi.DRMAmdgpuBOListIn{Operation: a.Operation, ListHandle: a.ListHandle, BONumber: a.BONumber,
		BOInfoSize: a.BOInfoSize, BOInfoPtr: a.BOInfoPtr}
	if errno := readBOListEntries(m, &in, nil); errno != 0 {
		return f.reject(m, errno, "BO_LIST: entry array", "bo_number", a.BONumber, "bo_info_size", a.BOInfoSize,
			"bo_info_ptr", hex(a.BOInfoPtr))
	}
	handle := a.ListHandle
	switch a.Operation {
	case abi.AMDGPU_BO_LIST_OP_CREATE:
		l, errno := f.newBOList(m, &in)
		if errno != 0 {
			return errno
		}
		f.mu.Lock()
		ok := f.usable()
		if ok {
			handle, ok = f.lists.alloc(l)
		}
		f.mu.Unlock()
		if !ok {
			l.release(f)
			return f.reject(m, syscall.ENOSPC, "BO_LIST: no handle")
		}
	case abi.AMDGPU_BO_LIST_OP_DESTROY:
		f.mu.Lock()
		l, ok := f.lists.remove(handle)
		f.mu.Unlock()
		if ok {
			l.release(f)
		}
		handle = 0
	case abi.AMDGPU_BO_LIST_OP_UPDATE:
		l, errno := f.newBOList(m, &in)
		if errno != 0 {
			return errno
		}
		f.mu.Lock()
		old, ok := f.lists.replace(handle, l)
		f.mu.Unlock()
		if !ok {
			l.release(f)
			return f.reject(m, syscall.ENOENT, "BO_LIST: update of an unknown list", "list", handle)
		}
		old.release(f)
	default:
		return f.reject(m, syscall.EINVAL, "BO_LIST: unknown operation", "op", a.Operation)
	}
	*a = abi.DRMAmdgpuBOList{}
	asOut(a, abi.DRMAmdgpuBOListOut{ListHandle: handle})
	return 0
}
