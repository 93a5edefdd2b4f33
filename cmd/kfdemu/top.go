package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// runTop prints the live figures of every GPU (the amdgpu sysfs of a mount, or of / on a real
// system or inside `kfdemu exec`) and refreshes them.
func runTop(args []string) int {
	fl := flag.NewFlagSet("top", flag.ContinueOnError)
	root := fl.String("root", DefaultMount, "system root holding sys/class/drm: a kfdemu mount, or / (real driver, or inside kfdemu exec)")
	interval := fl.Duration("interval", time.Second, "refresh interval")
	count := fl.Int("n", 0, "number of refreshes (0: until interrupted)")
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: kfdemu top [--root DIR] [--interval D] [-n N]\n\nShows, per GPU, what amdgpu's sysfs "+
			"reports: VRAM and GTT in use, GPU busy %, clocks, power, temperature and performance level.")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if *interval <= 0 {
		fmt.Fprintln(os.Stderr, "kfdemu top: --interval must be positive")
		return 2
	}
	tty := isTerminal(os.Stdout)
	for i := 0; *count == 0 || i < *count; i++ {
		if i > 0 {
			time.Sleep(*interval)
		}
		cards, err := readCards(*root)
		if err != nil {
			fmt.Fprintln(os.Stderr, "kfdemu top:", err)
			return 1
		}
		if tty {
			fmt.Print("\033[H\033[2J") // home, clear
		} else if i > 0 {
			fmt.Println()
		}
		printCards(os.Stdout, cards, time.Now())
	}
	return 0
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// card is what top shows of one cardN.
type card struct {
	name, bdf, level                  string
	vramUsed, vramTotal, gttUsed, gtt uint64
	busy                              int
	sclk, mclk                        string
	powerW, tempC                     float64
	hasPower, hasTemp                 bool
}

// readCards reads ROOT/sys/class/drm/card*/device of every AMD GPU (vendor 0x1002).
func readCards(root string) ([]card, error) {
	base := filepath.Join(root, "sys/class/drm")
	ents, err := os.ReadDir(base)
	if err != nil {
		return nil, fmt.Errorf("no DRM devices under %s: %w", root, err)
	}
	var cards []card
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, "card") || strings.Contains(n, "-") {
			continue
		}
		dev := filepath.Join(base, n, "device")
		if readTrim(dev, "vendor") != "0x1002" {
			continue
		}
		c := card{name: n, level: readTrim(dev, "power_dpm_force_performance_level")}
		if target, err := filepath.EvalSymlinks(dev); err == nil {
			c.bdf = filepath.Base(target)
		}
		c.vramUsed, c.vramTotal = readU64(dev, "mem_info_vram_used"), readU64(dev, "mem_info_vram_total")
		c.gttUsed, c.gtt = readU64(dev, "mem_info_gtt_used"), readU64(dev, "mem_info_gtt_total")
		c.busy = int(readU64(dev, "gpu_busy_percent"))
		c.sclk, c.mclk = currentLevel(readTrimRaw(dev, "pp_dpm_sclk")), currentLevel(readTrimRaw(dev, "pp_dpm_mclk"))
		if hw, _ := filepath.Glob(filepath.Join(dev, "hwmon/hwmon*")); len(hw) > 0 {
			if s := readTrim(hw[0], "power1_average"); s != "" {
				v, _ := strconv.ParseFloat(s, 64)
				c.powerW, c.hasPower = v/1e6, true
			}
			if s := readTrim(hw[0], "temp2_input"); s != "" { // junction
				v, _ := strconv.ParseFloat(s, 64)
				c.tempC, c.hasTemp = v/1000, true
			}
		}
		cards = append(cards, c)
	}
	sort.Slice(cards, func(i, j int) bool {
		a, _ := strconv.Atoi(strings.TrimPrefix(cards[i].name, "card"))
		b, _ := strconv.Atoi(strings.TrimPrefix(cards[j].name, "card"))
		return a < b
	})
	if len(cards) == 0 {
		return nil, fmt.Errorf("no AMD GPU under %s", base)
	}
	return cards, nil
}

func readTrimRaw(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return ""
	}
	return string(b)
}

func readTrim(dir, name string) string { return strings.TrimSpace(readTrimRaw(dir, name)) }

func readU64(dir, name string) uint64 {
	v, _ := strconv.ParseUint(readTrim(dir, name), 10, 64)
	return v
}

// currentLevel is the frequency of the line amdgpu marks with "*" in a pp_dpm_* text.
func currentLevel(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[2] == "*" {
			return f[1]
		}
	}
	return "N/A"
}

func printCards(w io.Writer, cards []card, now time.Time) {
	fmt.Fprintf(w, "kfdemu top  %s\n", now.Format("15:04:05"))
	fmt.Fprintf(w, "%-6s %-13s %21s %10s %5s %8s %8s %7s %6s %s\n",
		"GPU", "BUS", "VRAM used/total", "GTT used", "GPU%", "SCLK", "MCLK", "POWER", "TEMP", "PERF")
	gib := func(v uint64) string { return strconv.FormatFloat(float64(v)/(1<<30), 'f', 2, 64) }
	for _, c := range cards {
		pw, tc := "N/A", "N/A"
		if c.hasPower {
			pw = strconv.FormatFloat(c.powerW, 'f', 0, 64) + "W"
		}
		if c.hasTemp {
			tc = strconv.FormatFloat(c.tempC, 'f', 0, 64) + "C"
		}
		fmt.Fprintf(w, "%-6s %-13s %21s %10s %4d%% %8s %8s %7s %6s %s\n",
			c.name, c.bdf, gib(c.vramUsed)+"/"+gib(c.vramTotal)+" GiB", gib(c.gttUsed)+" GiB", c.busy, c.sclk, c.mclk, pw, tc, c.level)
	}
}
