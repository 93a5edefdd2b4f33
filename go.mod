module github.com/kfdemu/kfdemu

go 1.26.8

require (
	github.com/cilium/ebpf v0.22.0
	github.com/hanwen/go-fuse/v2 v2.12.1
	github.com/vmihailenco/msgpack/v5 v5.4.1
	golang.org/x/sys v0.49.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/google/btree v1.1.3 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
)
