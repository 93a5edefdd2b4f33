// Package relstore has release stores of 32- and 64-bit words: the store is visible to other
// threads after every earlier load and store of this thread, and no later one is visible before
// it, as C++'s memory_order_release, the order ROCr stores an AQL packet's header, its doorbell and
// a signal's value with. sync/atomic's Store is sequentially consistent, which on x86 is an XCHG:
// it waits for the store's cache line before the thread goes on, so a run of them (packet header,
// write index, doorbell) costs one cross-core transfer each, in series. Under x86's TSO a plain MOV
// is a release store; elsewhere, and under the race detector (which does not see assembly
// stores), these are sync/atomic's stores.
package relstore
