package authz

import (
	"os"
	"strconv"
	"testing"

	"github.com/phantom-dev/phantom/internal/guard"
	"github.com/phantom-dev/phantom/internal/procfs"
)

func TestConnectionAlive(t *testing.T) {
	self, err := procfs.Default.Stat(os.Getpid())
	if err != nil {
		t.Skip("no /proc:", err)
	}
	alive := connectionAlive(procfs.Default)
	me := guard.ProcessConnection(self.PID, self.StartTime)
	tests := []struct {
		conn string
		want bool
	}{
		{me, true},
		{me + "-c7-0a1b2c3d", true}, // a gateway connection of this process
		{guard.ProcessConnection(self.PID, self.StartTime+1), false}, // the pid, reused
		{guard.ProcessConnection(self.PID, self.StartTime+1) + "-c1-ff", false},
		{"proc-" + strconv.Itoa(1<<30) + "-5", false}, // no such process
		{"proc-x-5", false},
		{"proc-12", false},
		{"c3-deadbeef", true}, // not bound to a process: ends by EndConnection
		{"conn-1", true},
	}
	for _, tt := range tests {
		if got := alive(tt.conn); got != tt.want {
			t.Errorf("connectionAlive(%q) = %v, want %v", tt.conn, got, tt.want)
		}
	}
}
