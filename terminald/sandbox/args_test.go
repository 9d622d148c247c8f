package sandbox

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestArgvRoundTrip checks that what terminald writes is what the launcher
// reads, paths that look like flags included.
func TestArgvRoundTrip(t *testing.T) {
	r := Rules{
		WriteDirs:  []string{"/home/u/proj", "/tmp", "/home/u/--write=x"},
		WriteFiles: []string{"/home/u/.claude.json"},
		Devices:    []string{"/dev/null", "/dev/pts"},
		Sockets:    []string{"/home/u/.cache/phantom"},
		Isolate:    true,
		Tmp:        "/run/user/1/phantom/tmp/t3",
		Hide:       []string{"/run/user/1"},
		Keep:       []string{"/home/u/.cache/phantom/dev.sock", "/tmp/proj"},
		Allow:      []string{"/home/u/.cache/phantom/dev.sock"},
		Scan:       []string{"/home/u", "/run"},
	}
	argv := []string{"bash", "--posix", "--", "--write=/etc"}
	full := r.Argv("/usr/bin/phantom", argv)
	if full[0] != "/usr/bin/phantom" || full[1] != Command {
		t.Fatalf("Argv = %q, want the launcher and %s first", full, Command)
	}
	got, gotArgv, err := ParseArgs(full[2:])
	if err != nil {
		t.Fatalf("ParseArgs(%q): %v", full[2:], err)
	}
	if !reflect.DeepEqual(got, r) || !reflect.DeepEqual(gotArgv, argv) {
		t.Errorf("ParseArgs(Argv) = %+v, %q; want %+v, %q", got, gotArgv, r, argv)
	}
	if back, err := ParseFlags(r.Flags()); err != nil || !reflect.DeepEqual(back, r) {
		t.Errorf("ParseFlags(Flags) = %+v, %v; want %+v", back, err, r)
	}
	if _, err := ParseFlags([]string{"--write=relative"}); err == nil {
		t.Error("ParseFlags took a relative path")
	}
	got, gotArgv, err = ParseArgs(Rules{}.Argv("phantom", []string{"sh"})[2:])
	if err != nil || !reflect.DeepEqual(got, Rules{}) || !reflect.DeepEqual(gotArgv, []string{"sh"}) {
		t.Errorf("empty rules: ParseArgs = %+v, %q, %v", got, gotArgv, err)
	}
}

// TestParseArgsErrors checks that the launcher refuses anything terminald
// would not have written, naming what is wrong.
func TestParseArgsErrors(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"nothing", nil, "missing --"},
		{"no separator", []string{"--write=/tmp", "sh"}, "unknown argument \"sh\""},
		{"no program", []string{"--write=/tmp", "--"}, "no program"},
		{"empty program", []string{"--", ""}, "no program"},
		{"unknown flag", []string{"--read=/", "--", "sh"}, "unknown argument \"--read=/\""},
		{"separate value", []string{"--write", "/tmp", "--", "sh"}, "unknown argument \"--write\""},
		{"relative path", []string{"--write=tmp", "--", "sh"}, "--write: \"tmp\" is not a clean absolute path"},
		{"empty path", []string{"--device=", "--", "sh"}, "--device: \"\""},
		{"dot-dot", []string{"--write-file=/home/u/../../etc/passwd", "--", "sh"}, "clean absolute"},
		{"trailing slash", []string{"--connect=/run/", "--", "sh"}, "clean absolute"},
		{"NUL", []string{"--write=/tmp\x00/etc", "--", "sh"}, "clean absolute"},
		{"isolate with a value", []string{"--isolate=1", "--", "sh"}, "unknown argument \"--isolate=1\""},
		{"tmp twice", []string{"--isolate", "--tmp=/a", "--tmp=/b", "--", "sh"}, "--tmp given twice"},
		{"tmp on itself", []string{"--isolate", "--tmp=/tmp", "--", "sh"}, "mount /tmp on itself"},
		{"tmp relative", []string{"--isolate", "--tmp=t3", "--", "sh"}, "--tmp: \"t3\" is not a clean absolute path"},
		{"walls without isolate", []string{"--hide=/run/user/1", "--", "sh"}, "need --isolate"},
		{"tmp without isolate", []string{"--tmp=/x", "--", "sh"}, "need --isolate"},
		{"inside is not a rule", []string{"--inside", "--", "sh"}, "unknown argument \"--inside\""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, argv, err := ParseArgs(tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseArgs(%q) = %+v, %q, %v; want an error containing %q", tt.args, r, argv, err, tt.wantErr)
			}
		})
	}
}

// FuzzParseArgs checks that the parser never panics, that whatever it
// accepts is clean (absolute clean paths, a program), and that it reads
// back exactly what Argv writes from the rules it accepted.
func FuzzParseArgs(f *testing.F) {
	f.Add(strings.Join(Rules{WriteDirs: []string{"/tmp"}, Devices: []string{"/dev/null"}}.Argv("p", []string{"sh", "-c", "x"})[2:], "\n"))
	f.Add("--write=/a\n--write-file=/b\n--device=/dev/tty\n--connect=/c\n--\nbash\n--posix")
	f.Add("--\n--")
	f.Add("--write=/a/../b\n--\nsh")
	f.Add("--write\n/a\n--\nsh")
	f.Add("--isolate\n--tmp=/r/t1\n--hide=/run/user/1\n--keep=/k\n--allow=/s.sock\n--scan=/run\n--\nsh")
	f.Add("--tmp=/a\n--\nsh")
	f.Fuzz(func(t *testing.T, in string) {
		args := strings.Split(in, "\n")
		r, argv, err := ParseArgs(args)
		if err != nil {
			return
		}
		if len(argv) == 0 || argv[0] == "" {
			t.Fatalf("ParseArgs(%q) accepted no program: %q", args, argv)
		}
		if r.Tmp != "" && (!r.Isolate || r.Tmp == "/tmp" || !filepath.IsAbs(r.Tmp) || filepath.Clean(r.Tmp) != r.Tmp) {
			t.Fatalf("ParseArgs(%q) accepted --tmp=%q (isolate %v)", args, r.Tmp, r.Isolate)
		}
		for _, f := range r.fields() {
			for _, p := range *f.paths {
				if !filepath.IsAbs(p) || filepath.Clean(p) != p || strings.IndexByte(p, 0) >= 0 {
					t.Fatalf("ParseArgs(%q) accepted %s=%q", args, f.flag, p)
				}
			}
		}
		r2, argv2, err := ParseArgs(r.Argv("p", argv)[2:])
		if err != nil || !reflect.DeepEqual(r2, r) || !reflect.DeepEqual(argv2, argv) {
			t.Fatalf("round trip of %+v %q: %+v %q %v", r, argv, r2, argv2, err)
		}
	})
}
