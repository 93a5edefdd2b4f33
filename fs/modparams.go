package fs

// amdgpuParams is /sys/module/amdgpu/parameters as amdgpu (drivers/gpu/drm/amd/amdgpu/amdgpu_drv.c,
// Linux 6.10, the version MNT/sys/module/amdgpu/version reports) shows the parameters ROCm userspace
// reads, at their defaults: the KFD block (#ifdef CONFIG_HSA_AMD: sched_policy ... no_queue_eviction_on_vm_fault)
// plus emu_mode (kfdtest's is_emulator, KFDTestUtil.cpp) and noretry (XNACK tools). The text is the
// kernel's param_get_* output: "%i\n" for int, "Y\n"/"N\n" for bool. Other amdgpu parameters (display,
// power, RAS) are not listed. Read-only: a write gets EROFS from the read-only sys connection.
var amdgpuParams = map[string]string{
	// module_param_named(emu_mode, amdgpu_emu_mode, int, 0444); int amdgpu_emu_mode;
	"emu_mode": "0\n",
	// module_param_named(noretry, amdgpu_noretry, int, 0644); int amdgpu_noretry = -1;
	"noretry": "-1\n",
	// int sched_policy = KFD_SCHED_POLICY_HWS; (0)
	"sched_policy": "0\n",
	// int hws_max_conc_proc = -1; (the number of VMIDs for KFD)
	"hws_max_conc_proc": "-1\n",
	// int cwsr_enable = 1;
	"cwsr_enable": "1\n",
	// int max_num_of_queues_per_device = KFD_MAX_NUM_OF_QUEUES_PER_DEVICE_DEFAULT; (4096)
	"max_num_of_queues_per_device": "4096\n",
	"send_sigterm":                 "0\n",
	"debug_largebar":               "0\n",
	"ignore_crat":                  "0\n",
	"halt_if_hws_hang":             "0\n",
	// bool hws_gws_support;
	"hws_gws_support": "N\n",
	// int queue_preemption_timeout_ms = 9000;
	"queue_preemption_timeout_ms":   "9000\n",
	"debug_evictions":               "N\n",
	"no_system_mem_limit":           "N\n",
	"no_queue_eviction_on_vm_fault": "0\n",
}
