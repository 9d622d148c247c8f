package procfs

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseEnviron(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", []string{}},
		{"one", "A=1\x00", []string{"A=1"}},
		{"several in order", "B=2\x00A=1\x00C=\x00", []string{"B=2", "A=1", "C="}},
		{"value with = and spaces", "X=a=b c\x00", []string{"X=a=b c"}},
		{"unterminated tail dropped", "A=1\x00B=cut sh", []string{"A=1"}},
		{"only an unterminated entry", "A=1", []string{}},
		{"no =", "A=1\x00junk\x00B=2\x00", []string{"A=1", "B=2"}},
		{"empty name", "=x\x00A=1\x00", []string{"A=1"}},
		{"empty entries", "\x00\x00A=1\x00\x00", []string{"A=1"}},
		{"duplicates kept", "A=1\x00A=2\x00", []string{"A=1", "A=2"}},
		{"non-UTF-8 kept as bytes", "A=\xff\xfe\x00", []string{"A=\xff\xfe"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseEnviron([]byte(tc.in)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseEnviron(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestEnvironLookup(t *testing.T) {
	env := []string{"PATH=/bin", "A=1", "AB=2", "A=shadowed", "E="}
	for _, tc := range []struct {
		key   string
		want  string
		found bool
	}{
		{"A", "1", true}, // first match wins
		{"AB", "2", true},
		{"E", "", true},
		{"PATH", "/bin", true},
		{"B", "", false},
		{"A=1", "", false},
		{"", "", false},
		{"PAT", "", false},
	} {
		got, found := LookupEnv(env, tc.key)
		if got != tc.want || found != tc.found {
			t.Errorf("LookupEnv(%q) = %q, %v; want %q, %v", tc.key, got, found, tc.want, tc.found)
		}
	}
}

// FuzzParseEnviron checks that every entry ParseEnviron returns is a
// NUL-terminated KEY=value string of the input, that LookupEnv finds the
// first of each name, and that rendering the entries back and parsing
// again changes nothing.
func FuzzParseEnviron(f *testing.F) {
	f.Add([]byte("HOME=/root\x00PATH=/usr/bin:/bin\x00"))
	f.Add([]byte("A=1\x00A=2\x00=x\x00junk\x00tail=cut"))
	f.Add([]byte("\x00\x00\x00"))
	f.Add([]byte("PHANTOM_MCP_SOCKET=/tmp/a b.sock\x00PHANTOM_TAB_STATE=\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		env := ParseEnviron(b)
		seen := map[string]bool{}
		var again bytes.Buffer
		for _, kv := range env {
			key, value, ok := strings.Cut(kv, "=")
			if !ok || key == "" || strings.ContainsRune(kv, 0) {
				t.Fatalf("entry %q of %q is not KEY=value", kv, b)
			}
			if !bytes.Contains(b, append([]byte(kv), 0)) {
				t.Fatalf("entry %q is not a NUL-terminated string of %q", kv, b)
			}
			if got, found := LookupEnv(env, key); !found || !seen[key] && got != value {
				t.Fatalf("LookupEnv(%q) = %q, %v; want the first value %q", key, got, found, value)
			}
			seen[key] = true
			again.WriteString(kv)
			again.WriteByte(0)
		}
		if got := ParseEnviron(again.Bytes()); !reflect.DeepEqual(got, env) {
			t.Fatalf("round trip: %q != %q", got, env)
		}
	})
}

func TestEnvironFakeFS(t *testing.T) {
	root := t.TempDir()
	write := func(pid string, b []byte) {
		os.MkdirAll(filepath.Join(root, pid), 0o755)
		if err := os.WriteFile(filepath.Join(root, pid, "environ"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("5", []byte("A=1\x00B=2\x00"))
	write("6", nil) // a zombie or kernel thread
	write("7", bytes.Repeat([]byte("X=yyyyyyy\x00"), MaxEnviron/10+1))
	write("8", append(bytes.Repeat([]byte{'Z'}, MaxEnviron-3), "=1\x00"...))
	fsys := FS{Root: root}

	if got, err := fsys.Environ(5); err != nil || !reflect.DeepEqual(got, []string{"A=1", "B=2"}) {
		t.Errorf("Environ(5) = %q, %v", got, err)
	}
	if got, err := fsys.Environ(6); err != nil || len(got) != 0 {
		t.Errorf("Environ(6) = %q, %v; want empty", got, err)
	}
	if _, err := fsys.Environ(7); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("Environ(7) of %d bytes = %v, want an error naming the bound", MaxEnviron/10*10+10, err)
	}
	if got, err := fsys.Environ(8); err != nil || len(got) != 1 {
		t.Errorf("Environ(8) of exactly MaxEnviron bytes = %d entries, %v; want 1", len(got), err)
	}
	if _, err := fsys.Environ(404); !IsVanished(err) {
		t.Errorf("Environ(404) = %v, want a vanished process", err)
	}
}

// TestEnvironChild reads the environment of a real child: exactly what it
// was started with, the first of two duplicates winning. (os.StartProcess
// passes the environment as given; os/exec would drop the duplicate.)
func TestEnvironChild(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	p, err := os.StartProcess(sleep, []string{"sleep", "30"}, &os.ProcAttr{
		Env: []string{"PHANTOM_ENVIRON_TEST=first", "PATH=/usr/bin:/bin", "PHANTOM_ENVIRON_TEST=second"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill(); p.Wait() })

	// StartProcess returns once the child is in execve, which may not yet
	// have laid out the new environment: until then it reads empty.
	var env []string
	for deadline := time.Now().Add(5 * time.Second); len(env) == 0 && time.Now().Before(deadline); {
		if env, err = Default.Environ(p.Pid); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	want := []string{"PHANTOM_ENVIRON_TEST=first", "PATH=/usr/bin:/bin", "PHANTOM_ENVIRON_TEST=second"}
	if !reflect.DeepEqual(env, want) {
		t.Errorf("Environ(child) = %q, want %q", env, want)
	}
	if got, _ := LookupEnv(env, "PHANTOM_ENVIRON_TEST"); got != "first" {
		t.Errorf("child's PHANTOM_ENVIRON_TEST = %q, want the first", got)
	}
}

// TestEnvironUnreadable checks that another user's process (pid 1 when the
// tests do not run as root) gives a permission error, not an empty
// environment.
func TestEnvironUnreadable(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root reads every process's environment")
	}
	if _, err := Default.Environ(1); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Environ(1) as uid %d = %v, want a permission error", os.Getuid(), err)
	}
}
