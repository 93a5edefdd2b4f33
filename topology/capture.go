package topology

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Limits for reading captured trees: a capture is client-supplied input.
const (
	maxCaptureFiles = 200000
	maxFileSize     = 1 << 20
)

// LoadCapture reads a captured topology tree (the layout produced by copying
// /sys/class/kfd/kfd/topology: a directory holding nodes/ and usually generation_id and
// system_properties) into a Tree served byte for byte: the same entries and contents. Directory
// entries are listed with numeric names in numeric order, the rest by name. Symlinks are not
// followed; only regular files and directories are taken.
func LoadCapture(root string) (*Tree, error) {
	if _, err := os.Stat(filepath.Join(root, "nodes")); err != nil {
		return nil, fmt.Errorf("topology: %s is not a captured topology tree (no nodes/): %w", root, err)
	}
	count := 0
	var walk func(path, name string) (*Tree, error)
	walk = func(path, name string) (*Tree, error) {
		fi, err := os.Lstat(path)
		if err != nil {
			return nil, err
		}
		if count++; count > maxCaptureFiles {
			return nil, fmt.Errorf("topology: capture %s has more than %d entries", root, maxCaptureFiles)
		}
		switch {
		case fi.Mode().IsRegular():
			if fi.Size() > maxFileSize {
				return nil, fmt.Errorf("topology: %s: file larger than %d bytes", path, maxFileSize)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			return file(name, data), nil
		case fi.IsDir():
			ents, err := os.ReadDir(path)
			if err != nil {
				return nil, err
			}
			names := make([]string, 0, len(ents))
			for _, e := range ents {
				names = append(names, e.Name())
			}
			sortEntries(names)
			d := dir(name)
			for _, n := range names {
				c, err := walk(filepath.Join(path, n), n)
				if err != nil {
					return nil, err
				}
				if c != nil {
					d.Children = append(d.Children, c)
				}
			}
			return d, nil
		}
		return nil, nil // sockets, symlinks, devices: not part of a capture
	}
	return walk(root, "topology")
}

// sortEntries orders numeric names numerically before other names, the rest by name.
func sortEntries(names []string) {
	sort.Slice(names, func(i, j int) bool {
		a, ea := strconv.Atoi(names[i])
		b, eb := strconv.Atoi(names[j])
		switch {
		case ea == nil && eb == nil:
			return a < b
		case ea == nil:
			return true
		case eb == nil:
			return false
		}
		return names[i] < names[j]
	})
}

// WriteTree writes a Tree to disk under dir (dir itself stands for t).
func WriteTree(dir string, t *Tree) error {
	switch t.Kind {
	case File:
		return os.WriteFile(dir, t.Content(), 0644)
	case Symlink:
		return os.Symlink(t.Target, dir)
	}
	if err := os.MkdirAll(dir, 0755); err != nil {
		return err
	}
	for _, c := range t.Children {
		if err := WriteTree(filepath.Join(dir, c.Name), c); err != nil {
			return err
		}
	}
	return nil
}

// ReadSystem parses a topology tree (a mount, a real /sys/class/kfd/kfd/topology or a capture) into
// the model. Missing optional files (name, gpu_id, mem_banks...) are tolerated, as captures often
// lack them; malformed properties are errors.
func ReadSystem(root string) (*System, error) {
	s := &System{}
	if data, err := os.ReadFile(filepath.Join(root, "system_properties")); err == nil {
		p, _, err := ParseProperties(data)
		if err != nil {
			return nil, fmt.Errorf("system_properties: %w", err)
		}
		s.PlatformOEM, s.PlatformID, s.PlatformRev = p.Get("platform_oem"), p.Get("platform_id"), p.Get("platform_rev")
	}
	if data, err := os.ReadFile(filepath.Join(root, "generation_id")); err == nil {
		s.generation, _ = strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	}
	ids, err := numericEntries(filepath.Join(root, "nodes"))
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		nd := filepath.Join(root, "nodes", strconv.Itoa(id))
		props, err := readProps(filepath.Join(nd, "properties"))
		if err != nil {
			return nil, err
		}
		n := &Node{ID: id, Props: props}
		if b, err := os.ReadFile(filepath.Join(nd, "name")); err == nil {
			n.Name = strings.TrimSuffix(string(b), "\n")
		}
		if b, err := os.ReadFile(filepath.Join(nd, "gpu_id")); err == nil {
			v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("%s/gpu_id: %w", nd, err)
			}
			n.GPUID = uint32(v)
		}
		n.Gfx = n.GfxTarget()
		sub := func(kind string, f func(p Props, sib []bool)) error {
			ms, err := numericEntries(filepath.Join(nd, kind))
			if err != nil {
				return nil // optional
			}
			for _, m := range ms {
				path := filepath.Join(nd, kind, strconv.Itoa(m), "properties")
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				p, sib, err := ParseProperties(data)
				if err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
				f(p, sib)
			}
			return nil
		}
		for _, e := range []error{
			sub("mem_banks", func(p Props, _ []bool) { n.MemBanks = append(n.MemBanks, Bank{p}) }),
			sub("caches", func(p Props, sib []bool) { n.Caches = append(n.Caches, Cache{p, sib}) }),
			sub("io_links", func(p Props, _ []bool) { n.IOLinks = append(n.IOLinks, Link{p}) }),
			sub("p2p_links", func(p Props, _ []bool) { n.P2PLinks = append(n.P2PLinks, Link{p}) }),
		} {
			if e != nil {
				return nil, e
			}
		}
		s.Nodes = append(s.Nodes, n)
	}
	return s, nil
}

func readProps(path string) (Props, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, _, err := ParseProperties(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

func numericEntries(dir string) ([]int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ids []int
	for _, e := range ents {
		if id, err := strconv.Atoi(e.Name()); err == nil && id >= 0 && e.IsDir() {
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	return ids, nil
}
