package trace

import "unsafe"

func unsafePointer(p *[8]byte) unsafe.Pointer { return unsafe.Pointer(p) }
