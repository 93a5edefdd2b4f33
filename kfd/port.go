package kfd

import "github.com/kfdemu/kfdemu/mmu"

// port is an engine's window on a process's GPU address space on one device (its UTCL1): the
// queue engines and the shader reach memory only through it, translating through the pdd's page
// tables (package mmu). A TLB hit takes no lock shared with other queues; MAP, UNMAP and FREE
// change the tables and wait for the ports (mmu's quiescence) before the memory goes away.
func (p *Process) port(pd *pdd) *mmu.Port { return pd.vm.NewPort() }
