package procfs

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// MaxEnviron bounds how much of /proc/<pid>/environ Environ reads. The
// kernel caps a single string at 128 KiB and argv and envp together at a
// quarter of the stack limit (2 MiB by default), so a real environment is a
// few kilobytes and one over a megabyte is refused rather than read.
const MaxEnviron = 1 << 20

// Environ returns the environment process pid was started with, from
// <Root>/<pid>/environ, as "KEY=value" strings in the order the kernel holds
// them (see ParseEnviron). Look a variable up with LookupEnv.
//
// Three things to know before using it:
//
//   - It is the environment the process received from execve, not its
//     current one: variables it set or unset afterwards do not show.
//   - Reading it needs ptrace read access to the process: another user's,
//     a non-dumpable one or one outside the caller's Landlock domain fails
//     with a permission error. A kernel thread or a zombie has none (empty).
//   - The process can overwrite that memory at will (setproctitle does), so
//     like Cmdline it is informative only: never base a security decision
//     on it.
func (p FS) Environ(pid int) ([]string, error) {
	name := p.path(pid, "environ")
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxEnviron+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxEnviron {
		return nil, fmt.Errorf("procfs: %s is larger than %d bytes", name, MaxEnviron)
	}
	return ParseEnviron(b), nil
}

// ParseEnviron parses the contents of a /proc/<pid>/environ file: strings
// each ended by a NUL. It keeps only well-formed entries, a non-empty name
// followed by '=' and a value, as getenv(3) would see them:
//
//   - an unterminated tail is dropped: it is what is left of memory the
//     process overwrote, and taking it could return a value cut short;
//   - an entry without '=' or with an empty name is skipped (execve accepts
//     any string, but no lookup can match it);
//   - duplicates are kept in order; LookupEnv takes the first, as getenv(3)
//     and Go's os.Getenv do.
func ParseEnviron(b []byte) []string {
	end := bytes.LastIndexByte(b, 0)
	if end < 0 {
		return []string{}
	}
	env := make([]string, 0, bytes.Count(b[:end], []byte{0})+1)
	for entry := range bytes.SplitSeq(b[:end], []byte{0}) {
		if bytes.IndexByte(entry, '=') > 0 {
			env = append(env, string(entry))
		}
	}
	return env
}

// LookupEnv returns the value of the first entry of env named key, and
// whether there was one. env holds "KEY=value" strings, as Environ and
// os.Environ return them.
func LookupEnv(env []string, key string) (string, bool) {
	if key == "" {
		return "", false
	}
	for _, kv := range env {
		if len(kv) > len(key) && kv[len(key)] == '=' && kv[:len(key)] == key {
			return kv[len(key)+1:], true
		}
	}
	return "", false
}
