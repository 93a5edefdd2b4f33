// Package topology models the KFD topology (the CRAT-derived node, memory,
// cache and link tables of kfd_topology.c) and renders it as sysfs text.
package topology
