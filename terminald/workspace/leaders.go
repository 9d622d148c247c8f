package workspace

// TabOfLeader returns the id of the open tab whose program is the process
// pid started at start (clock ticks since boot, /proc/<pid>/stat field
// 22). The start time makes a reused pid name no tab.
func (w *Workspace) TabOfLeader(pid int, start uint64) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, e := range w.tabs {
		if e.tab.leaderPID == pid && e.tab.leaderStart == start && start != 0 {
			return id, true
		}
	}
	return "", false
}
