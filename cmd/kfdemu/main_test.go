package main

import (
	"os"
	"testing"

	"github.com/kfdemu/kfdemu/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Cleanup()
	os.Exit(code)
}
