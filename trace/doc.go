// Package trace is an eBPF tracer for kfd and amdgpu ioctls: tracepoints on ioctl entry and exit,
// filtered in the kernel to one process tree, copy each argument struct (_IOC_SIZE bytes, bounded) and
// the arrays that matter (WAIT_EVENTS events, MAP/UNMAP device ids) into a ring buffer; user space
// keeps only calls on kfd and render-node fds (the real device nodes or a kfdemu mount) and decodes
// them with the names and layouts of kfd/abi's ioctl tables (abi.Ioctls, abi.DRMIoctls).
//
// It works the same against the real amdkfd and against kfdemu: it observes the syscall, not the driver.
// One exception under kfdemu: the ioctls that return a new fd (abi.FDIoctls) are stopped by kfdemu
// exec's seccomp filter before the ioctl tracepoint, and the daemon issues them on its copy of the
// client's fd (fs/supervise.go); they appear as the daemon's calls when the daemon is in the traced
// tree (`kfdemu trace -- kfdemu exec ...` with exec starting the daemon), and not at all otherwise.
// Concurrency: a Tracer is used by one reader goroutine; Add may be called concurrently with Read.
package trace
