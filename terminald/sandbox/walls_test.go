package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestComputeWalls checks the namespace walls Compute adds with Isolate:
// what is hidden, kept in view, allowed, scanned and writable, for tabs
// inside and outside the covered directories.
func TestComputeWalls(t *testing.T) {
	// Outside /tmp, which the private /tmp covers as a whole.
	t.Setenv("TMPDIR", "/var/tmp")
	root := makeTree(t)
	xdg := filepath.Join(root, "run")
	for _, tt := range []struct {
		name    string
		dir     string
		tmpDirs []string
		sockets []string
		want    Rules // only the wall fields, relative to root
		// writable are WriteDirs that must be there, relative to root.
		writable []string
	}{
		{
			name: "tab in the home directory",
			dir:  "home/proj",
			want: Rules{
				Tmp:   "run/phantom/tmp/t1",
				Hide:  []string{"run"},
				Keep:  []string{"run/phantom/shell"},
				Allow: []string{"home/.cache/phantom/dev.sock"},
				Scan:  []string{"/run", "home"},
			},
			writable: []string{"home/proj", "run"},
		},
		{
			name:    "tab in a directory of the runtime dir, a socket allowed",
			dir:     "run/work",
			sockets: []string{"~/.docker/run/docker.sock", filepath.Join(root, "run/bus")},
			want: Rules{
				Tmp:   "run/phantom/tmp/t1",
				Hide:  []string{"run"},
				Keep:  []string{"run/bus", "run/phantom/shell", "run/work"},
				Allow: []string{"home/.cache/phantom/dev.sock", "home/.docker/run/docker.sock", "run/bus"},
				Scan:  []string{"/run", "home"},
			},
			writable: []string{"run/work", "run"},
		},
		{
			name:    "$TMPDIR under /tmp is fresh in the private /tmp",
			dir:     "home/proj",
			tmpDirs: []string{"/tmp/agent", "/tmp"},
			want: Rules{
				Tmp:   "run/phantom/tmp/t1",
				Hide:  []string{"run"},
				Keep:  []string{"run/phantom/shell"},
				Allow: []string{"home/.cache/phantom/dev.sock"},
				Scan:  []string{"/run", "home"},
			},
			writable: []string{"/tmp", "run"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.MkdirAll(filepath.Join(root, tt.dir), 0o700); err != nil {
				t.Fatal(err)
			}
			s := specIn(root, tt.dir)
			s.Isolate, s.Tmp, s.Sockets = true, filepath.Join(root, "run/phantom/tmp/t1"), tt.sockets
			if tt.tmpDirs != nil {
				s.TempDirs = tt.tmpDirs
			}
			s.Getenv = func(k string) string {
				if k == "XDG_RUNTIME_DIR" {
					return xdg
				}
				return ""
			}
			r, err := Compute(s)
			if err != nil {
				t.Fatal(err)
			}
			got := Rules{Tmp: rel(root, []string{r.Tmp})[0], Hide: rel(root, r.Hide), Keep: rel(root, r.Keep), Allow: rel(root, r.Allow), Scan: rel(root, r.Scan)}
			want := tt.want
			for _, l := range []*[]string{&want.Hide, &want.Keep, &want.Allow, &want.Scan} {
				if *l == nil {
					*l = []string{}
				}
			}
			if !r.Isolate || !reflect.DeepEqual(got, want) {
				t.Errorf("walls = %+v (isolate %v)\nwant    %+v", got, r.Isolate, want)
			}
			for _, w := range tt.writable {
				if !slices.Contains(rel(root, r.WriteDirs), w) {
					t.Errorf("WriteDirs %q lack %s", rel(root, r.WriteDirs), w)
				}
			}
			if _, _, err := ParseArgs(r.Argv("p", []string{"sh"})[2:]); err != nil {
				t.Errorf("the launcher refuses what Compute made: %v", err)
			}
		})
	}
}

// TestComputeWallsRefuses checks that a private /tmp must be a directory
// of its own.
func TestComputeWallsRefuses(t *testing.T) {
	root := makeTree(t)
	for _, tmp := range []string{"/tmp", "relative", "/a/../b"} {
		s := specIn(root, "home/proj")
		s.Isolate, s.Tmp = true, tmp
		if _, err := Compute(s); err == nil || !strings.Contains(err.Error(), "private /tmp") {
			t.Errorf("Compute with Tmp %q: %v, want a refusal naming the private /tmp", tmp, err)
		}
	}
}

// TestFindSockets checks the breadth-first, bounded scan for sockets.
func TestFindSockets(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/b/c/d", "link"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for _, s := range []string{"top.sock", "a/one.sock", "a/b/c/deep.sock", "a/b/c/d/too-deep.sock"} {
		p := filepath.Join(root, s)
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		if err := unix.Bind(fd, &unix.SockaddrUnix{Name: p}); err != nil {
			t.Skipf("bind %s: %v (path too long for a socket?)", p, err)
		}
		if !strings.Contains(s, "too-deep") {
			want = append(want, p)
		}
	}
	os.WriteFile(filepath.Join(root, "plain"), nil, 0o600)
	os.Symlink(filepath.Join(root, "a"), filepath.Join(root, "link/a")) // not followed
	for _, tt := range []struct {
		name       string
		max, depth int
		want       []string
	}{
		{"four levels", MaxScan, MaxScanDepth, want},
		{"one level", MaxScan, 1, want[:1]},
		{"budget spent at the top", 2, MaxScanDepth, nil},
	} {
		got := findSockets(root, tt.max, tt.depth)
		slices.Sort(got)
		w := slices.Clone(tt.want)
		slices.Sort(w)
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s: findSockets = %q, want %q", tt.name, got, w)
		}
	}
}

// TestParseMountInfo checks the reading of mountinfo lines.
func TestParseMountInfo(t *testing.T) {
	for _, tt := range []struct {
		line string
		want mountPoint
		ok   bool
	}{
		{"36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue", mountPoint{"/mnt2", unix.MS_NOATIME}, true},
		{"22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw", mountPoint{"/proc", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_RELATIME}, true},
		{`40 1 8:1 / /media/my\040disk ro,nosymfollow - ext4 /dev/sdb1 ro`, mountPoint{"/media/my disk", unix.MS_NOSYMFOLLOW}, true},
		{`41 1 8:1 / /a\134b\011c rw - ext4 /dev/sdb1 rw`, mountPoint{"/a\\b\tc", 0}, true},
		{`42 1 8:1 / /odd\04 rw - ext4 x rw`, mountPoint{`/odd\04`, 0}, true},
		{"short line", mountPoint{}, false},
	} {
		got, ok := parseMountInfo(tt.line)
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseMountInfo(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzUnescapeMountInfo checks that unescaping never panics and undoes
// the kernel's escaping of any path.
func FuzzUnescapeMountInfo(f *testing.F) {
	for _, s := range []string{"/a b", "/a\\b", "/\t\n", `\040`, "/ünï"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		var b strings.Builder
		for i := 0; i < len(p); i++ {
			switch c := p[i]; c {
			case ' ', '\t', '\n', '\\':
				b.WriteString("\\" + string('0'+c>>6) + string('0'+(c>>3)&7) + string('0'+c&7))
			default:
				b.WriteByte(c)
			}
		}
		if got := unescapeMountInfo(b.String()); got != p {
			t.Fatalf("unescapeMountInfo(%q) = %q, want %q", b.String(), got, p)
		}
		_ = unescapeMountInfo(p) // any input: no panic
	})
}
