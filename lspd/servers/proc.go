package servers

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// pageSize converts /proc/<pid>/statm's pages to bytes.
var pageSize = int64(os.Getpagesize())

// rss is the resident memory of process pid in bytes, 0 if unknown.
func rss(pid int) int64 {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	n, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return n * pageSize
}

// timeoutUntil is the time left until d.
func timeoutUntil(d time.Time) time.Duration { return time.Until(d) }
