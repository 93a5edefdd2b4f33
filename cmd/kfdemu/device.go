package main

import (
	"log/slog"

	"github.com/kfdemu/kfdemu/kfd"
	"github.com/kfdemu/kfdemu/mmnotify"
	"github.com/kfdemu/kfdemu/topology"
)

// newDevice builds the driver for a topology (mountEmulator serves a captured tree without one);
// svm false reports the 1.2 interface even when munmaps can be observed (--no-svm).
func newDevice(sys *topology.System, log *slog.Logger, svm bool) kfd.Device {
	d := kfd.New(sys, log)
	d.AdvertiseSVM(svm)
	// SVM needs the clients' munmaps (amdkfd's MMU notifiers); without them the driver reports
	// the 1.2 interface and libhsakmt keeps SVM off (kfd/handlers.go).
	n, err := mmnotify.Open(log.Warn)
	if err != nil {
		log.Warn("clients' munmaps cannot be observed: KFD interface 1.2, SVM off", "err", err)
		return d
	}
	d.SetMMNotifier(n)
	if svm {
		log.Debug("KFD interface 1.12: SVM ranges follow clients' munmaps (eBPF)")
	} else {
		log.Info("KFD interface 1.2 (--no-svm): libhsakmt keeps SVM off")
	}
	return d
}
