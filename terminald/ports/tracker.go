package ports

import (
	"cmp"
	"maps"
	"slices"
	"sync"

	"github.com/phantom-dev/phantom/internal/procfs"
)

// Tracker attributes listening TCP ports to tabs.
//
// A process belongs to a tab if it is the tab's leader (the shell terminald
// started with setsid), is in the leader's session, or if one of its
// ancestors is: programs that call setsid themselves (daemons, some dev servers,
// `setsid`, `nohup`-style wrappers) leave the session but keep their parent
// chain, so the chain is followed as well.
//
// Mapping sockets to processes needs a readlink of every fd of every process
// of every tab, a few milliseconds for 100 tabs, while the listening-socket
// dump costs ~0.2 ms. So each call dumps the sockets and redoes the /proc
// walk only if the set of listening sockets or the set of tabs differs from
// the previous call; otherwise it returns the cached answer.
//
// A Tracker is safe for concurrent use.
type Tracker struct {
	fs   procfs.FS
	dump func() ([]Listener, error) // replaced by tests

	mu       sync.Mutex
	valid    bool
	lastKey  []sockKey
	lastTabs map[string]int
	cached   map[string][]uint16
	walks    uint64
}

// sockKey identifies a listening socket for change detection. The inode
// alone would do while the socket lives; the port guards against an inode
// number being recycled for a new socket between two calls.
type sockKey struct {
	inode uint64
	port  uint16
}

// NewTracker returns a Tracker reading processes from fs. With the real
// /proc (procfs.Default) it dumps sockets with Dump (netlink, falling back to
// /proc/net/tcp); with any other root it reads <root>/net/tcp{,6}, so a fake
// /proc tree can describe sockets too.
func NewTracker(fs procfs.FS) *Tracker {
	t := &Tracker{fs: fs, dump: Dump}
	if fs.Root != procfs.Default.Root {
		t.dump = func() ([]Listener, error) { return DumpProc(fs.Root) }
	}
	return t
}

// Walks reports how many times the Tracker has walked /proc, i.e. how many
// calls to Ports could not use the cached answer. For tests and metrics.
func (t *Tracker) Walks() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.walks
}

// Ports returns, for each tab in tabs (tab id -> pid of the tab's session
// leader), the sorted, de-duplicated TCP ports that processes of the tab
// listen on. Tabs with no listening port are absent from the result. The
// result is the caller's to modify.
//
// Leader pids must be processes the caller has not yet reaped (terminald is
// their parent): a pid is not reused before it is reaped, so removing a tab
// from tabs before calling Wait on its leader rules out attributing a
// stranger that inherited the pid.
//
// Only sockets of the caller's network namespace are seen, and only
// processes whose /proc/<pid>/fd the caller may read (its own uid, unless
// privileged) are attributed.
func (t *Tracker) Ports(tabs map[string]int) (map[string][]uint16, error) {
	if len(tabs) == 0 {
		return map[string][]uint16{}, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()

	// Dump before walking /proc: a socket in the dump was created by a
	// process that already existed, so the walk that follows can see it.
	ls, err := t.dump()
	if err != nil {
		return nil, err
	}
	key := make([]sockKey, 0, len(ls))
	for _, l := range ls {
		key = append(key, sockKey{l.Inode, l.Port})
	}
	slices.SortFunc(key, func(a, b sockKey) int {
		return cmp.Or(cmp.Compare(a.inode, b.inode), cmp.Compare(a.port, b.port))
	})
	key = slices.Compact(key)

	if t.valid && slices.Equal(key, t.lastKey) && maps.Equal(tabs, t.lastTabs) {
		return cloneResult(t.cached), nil
	}
	res, err := t.walk(tabs, key)
	if err != nil {
		t.valid = false
		return nil, err
	}
	t.walks++
	t.valid, t.lastKey, t.lastTabs, t.cached = true, key, maps.Clone(tabs), res
	return cloneResult(res), nil
}

// walk maps the listening sockets in key to tabs through /proc.
func (t *Tracker) walk(tabs map[string]int, key []sockKey) (map[string][]uint16, error) {
	stats, err := t.fs.AllStats()
	if err != nil {
		return nil, err
	}
	procs := procfs.StatMap(stats)

	// Sessions and leaders of the tabs. Session membership counts only for
	// a leader that leads its own session: one that shares its parent's
	// session would otherwise claim that whole session, terminald's own
	// listeners included; its descendants still count. A leader that
	// already exited leaves its session behind: the remaining members keep
	// its pid as their session id, and the kernel does not reuse a pid while
	// it names a live session, so the pid still identifies the session.
	sessionTabs := map[int][]string{}
	leaderTabs := map[int][]string{}
	for tab, leader := range tabs {
		leaderTabs[leader] = append(leaderTabs[leader], tab)
		if st, ok := procs[leader]; !ok || st.Session == leader {
			sessionTabs[leader] = append(sessionTabs[leader], tab)
		}
	}

	owner := newOwnership(procs, sessionTabs, leaderTabs)
	portOf := make(map[uint64]uint16, len(key))
	for _, k := range key {
		portOf[k.inode] = k.port
	}
	found := map[string][]uint16{}
	for pid := range procs {
		tabsOfPid := owner.tabs(pid)
		if len(tabsOfPid) == 0 {
			continue
		}
		inodes, err := t.fs.SocketInodes(pid)
		if err != nil {
			// Vanished since AllStats, or not ours to read: skip. A
			// listener it held will be picked up by the next walk if it
			// still exists and changes, or stays unattributed.
			continue
		}
		for _, ino := range inodes {
			port, ok := portOf[ino]
			if !ok {
				continue
			}
			for _, tab := range tabsOfPid {
				found[tab] = append(found[tab], port)
			}
		}
	}
	for tab, ps := range found {
		slices.Sort(ps)
		found[tab] = slices.Compact(ps)
	}
	return found, nil
}

// ownership resolves which tabs a process belongs to, memoizing along parent
// chains so that the whole process table is resolved in linear time.
type ownership struct {
	procs       map[int]procfs.Stat
	sessionTabs map[int][]string
	leaderTabs  map[int][]string
	memo        map[int][]string
	path        []int
}

func newOwnership(procs map[int]procfs.Stat, sessionTabs, leaderTabs map[int][]string) *ownership {
	return &ownership{procs: procs, sessionTabs: sessionTabs, leaderTabs: leaderTabs, memo: make(map[int][]string, len(procs))}
}

// tabs returns the tabs of the nearest process, from pid up its parent
// chain, that is a tab leader or in a tab's session; nil if none is.
func (o *ownership) tabs(pid int) []string {
	o.path = o.path[:0]
	var res []string
	cur := pid
	for {
		if r, ok := o.memo[cur]; ok {
			res = r
			break
		}
		st, ok := o.procs[cur]
		if !ok {
			break
		}
		o.path = append(o.path, cur)
		if r := o.sessionTabs[st.Session]; r != nil {
			res = r
			break
		}
		if r := o.leaderTabs[cur]; r != nil {
			res = r
			break
		}
		parent, ok := o.procs[st.PPID]
		// Stop at the root, at a parent missing from the snapshot, at a
		// "parent" younger than its child (its pid was reused during the
		// walk), and on a cycle (only possible in a corrupt snapshot).
		if st.PPID <= 0 || !ok || parent.StartTime > st.StartTime || len(o.path) > len(o.procs) {
			break
		}
		cur = st.PPID
	}
	for _, p := range o.path {
		o.memo[p] = res
	}
	return res
}

func cloneResult(m map[string][]uint16) map[string][]uint16 {
	out := make(map[string][]uint16, len(m))
	for k, v := range m {
		out[k] = slices.Clone(v)
	}
	return out
}
