package main

import (
	"fmt"
	"sync"

	"github.com/kfdemu/kfdemu/kfd"
	"github.com/kfdemu/kfdemu/mmnotify"
)

var probeMM = sync.OnceValue(func() bool {
	n, err := mmnotify.Open(nil)
	if err != nil {
		return false
	}
	n.Close()
	return true
})

// interfaceVersion is the KFD interface a daemon started by the tests reports: 1.9 where it can
// watch clients' munmaps (root with eBPF, as in CI), else 1.2 (kfd/handlers.go).
func interfaceVersion() string {
	if probeMM() {
		return fmt.Sprintf("1.%d", kfd.MinorSVM)
	}
	return fmt.Sprintf("1.%d", kfd.MinorGPUVM)
}
