// Package amdgpu renders the sysfs the amdgpu driver creates for each GPU (the PCI device
// directory with amdgpu_device.c, amdgpu_pm.c, amdgpu_xgmi.c and pci-sysfs.c attributes, the DRM
// minors' directories, hwmon, and the sys/class/drm and sys/class/hwmon links), with live figures:
// memory in use and busy time come from the driver (Source: kfd.Driver), clocks, power, voltage and
// temperature from a small documented model driven by the busy time (docs/drm-sysfs.md lists every
// file, its format and the source of every value). Writes that amdgpu accepts change the state
// read back (performance level, forced clock levels, power cap); refused ones return its errno.
//
// Nothing runs in the background: the busy Meter is updated by the engines when work starts and
// ends, and every figure is computed when it is read (the thermal model advances lazily).
//
// Lock order: Device.mu before the Source's locks (Driver.mu) before Meter.mu, a leaf. The driver
// never calls into a Device.
package amdgpu
