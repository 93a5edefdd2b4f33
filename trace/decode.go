package trace

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Decoded is a call with its decoded arguments, for --json.
type Decoded struct {
	Time     float64           `json:"time"`
	Pid      int               `json:"pid"`
	Tid      int               `json:"tid"`
	Device   string            `json:"device"`
	Ioctl    string            `json:"ioctl"`
	Cmd      string            `json:"cmd"`
	Fields   map[string]uint64 `json:"fields,omitempty"`
	Order    []string          `json:"-"`
	Array    []uint64          `json:"array,omitempty"` // the pointed-to array, decoded (ArrayOf says what)
	ArrayOf  string            `json:"array_of,omitempty"`
	Result   int64             `json:"result"`
	Errno    string            `json:"errno,omitempty"`
	Duration float64           `json:"duration_us"`
}

// Decode decodes c.
func Decode(c Call) Decoded {
	d := Decoded{Time: c.Start.Seconds(), Pid: c.Pid, Tid: c.Tid, Device: c.Device,
		Cmd: fmt.Sprintf("%#x", c.Cmd), Result: c.Ret, Duration: float64(c.Duration) / float64(time.Microsecond)}
	d.Ioctl = fmt.Sprintf("%c_0x%02x", rune(c.Cmd>>8&0xff), c.Cmd&0xff)
	// A command the kfd/abi tables name gets its name and decoded fields; others keep the number
	// and the raw argument.
	if name, keys, vals, ok := describeABI(c.Cmd, c.Arg); ok {
		d.Ioctl, d.Order = name, keys
		d.Fields = map[string]uint64{}
		for i, k := range keys {
			d.Fields[k] = vals[i]
		}
	}
	d.ArrayOf, d.Array = decodeArray(c.Cmd, c.Extra)
	if e := c.Errno(); e != 0 {
		d.Errno = errnoName(e)
	}
	return d
}

// decodeArray decodes the array the BPF program copied: WAIT_EVENTS' struct kfd_event_data
// entries (48 bytes, event_id at 40) and MAP/UNMAP_MEMORY_TO/FROM_GPU's u32 gpu_ids.
func decodeArray(cmd uint32, b []byte) (string, []uint64) {
	if len(b) == 0 {
		return "", nil
	}
	var out []uint64
	switch cmd & 0xffff {
	case cmdWaitEvents:
		for i := 0; i+eventDataSize <= len(b); i += eventDataSize {
			out = append(out, uint64(binary.LittleEndian.Uint32(b[i+40:])))
		}
		return "event_ids", out
	case cmdMap, cmdUnmap:
		for i := 0; i+4 <= len(b); i += 4 {
			out = append(out, uint64(binary.LittleEndian.Uint32(b[i:])))
		}
		return "device_ids", out
	}
	return "", nil
}

// Format renders c as one line: time, pid (pid/tid for a thread other than the process's main
// thread, as strace -f tells threads apart), ioctl name, fields, result, duration.
func Format(c Call) string {
	d := Decode(c)
	var b strings.Builder
	who := strconv.Itoa(d.Pid)
	if d.Tid != 0 && d.Tid != d.Pid {
		who += "/" + strconv.Itoa(d.Tid)
	}
	fmt.Fprintf(&b, "%12.6f %13s %-32s", d.Time, who, d.Ioctl)
	if d.Order != nil {
		for _, k := range d.Order {
			fmt.Fprintf(&b, " %s=%#x", k, d.Fields[k])
		}
	} else if len(c.Arg) > 0 {
		fmt.Fprintf(&b, " arg=%x", c.Arg)
	}
	switch {
	case d.ArrayOf != "":
		fmt.Fprintf(&b, " %s=%v", d.ArrayOf, d.Array)
	case len(c.Extra) > 0:
		fmt.Fprintf(&b, " array=%x", c.Extra)
	}
	if d.Errno != "" {
		fmt.Fprintf(&b, " = -1 %s", d.Errno)
	} else {
		fmt.Fprintf(&b, " = %d", d.Result)
	}
	fmt.Fprintf(&b, " <%.1fus>", d.Duration)
	return b.String()
}

func errnoName(e interface{ Error() string }) string { return e.Error() }
