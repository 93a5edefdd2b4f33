package main

import (
	"log/slog"

	"github.com/kfdemu/kfdemu/kfd"
	"github.com/kfdemu/kfdemu/topology"
)

func init() {
	newDevice = func(sys *topology.System, log *slog.Logger) kfd.Device { return kfd.New(sys, log) }
}
