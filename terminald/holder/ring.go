package holder

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// DefaultRingSize is the raw output each tab keeps for a new terminald to
// rebuild its screen and scrollback from: 1 MiB is about 13,000 lines of
// 80 columns, more than the default scrollback, and costs nothing until
// the tab has written that much (memfd pages are allocated on first
// touch).
const DefaultRingSize = 1 << 20

// MaxChunk is the most a single Write copies before it publishes the new
// end of the ring. A terminald killed in the middle of a copy leaves at
// most this many bytes overwritten but not yet accounted for, so a reader
// skips that much of the oldest data (see Contents).
const MaxChunk = 64 << 10

// The ring's header, at the start of the memfd.
const (
	ringMagic      = 0x70686e74_72696e67 // "phntring"
	ringHeaderSize = 64
	offMagic       = 0
	offSize        = 8
	offTotal       = 16 // bytes ever written; updated atomically after each copy
)

// Ring is a tab's bounded ring of recent raw output in a sealed memfd.
// terminald maps it and appends every chunk it reads from the PTY (one
// copy); the holder only keeps the descriptor open, never reading it, so a
// new terminald can map the same memory and replay what the tab showed.
//
// One goroutine writes (the tab's read loop); Contents is for a ring no
// one writes any more (a restarted terminald's first look).
type Ring struct {
	f    *os.File
	mem  []byte
	data []byte
}

// NewRing makes a ring holding the last size bytes of output. The memfd
// is sealed against shrinking and growing, so that no other holder of the
// descriptor can truncate it under terminald's mapping (a SIGBUS).
func NewRing(name string, size int) (*Ring, error) {
	if size < 2*MaxChunk || size > 1<<30 {
		return nil, fmt.Errorf("ring for %s: size %d is outside [%d, %d]", name, size, 2*MaxChunk, 1<<30)
	}
	fd, err := unix.MemfdCreate("phantom-ring-"+name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("ring for %s: memfd_create: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), "phantom-ring-"+name)
	if err := f.Truncate(int64(ringHeaderSize + size)); err != nil {
		f.Close()
		return nil, fmt.Errorf("ring for %s: size the memfd: %w", name, err)
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL); err != nil {
		f.Close()
		return nil, fmt.Errorf("ring for %s: seal the memfd: %w", name, err)
	}
	r, err := mapRing(f, name)
	if err != nil {
		f.Close()
		return nil, err
	}
	binary.LittleEndian.PutUint64(r.mem[offSize:], uint64(size))
	binary.LittleEndian.PutUint64(r.mem[offMagic:], ringMagic)
	return r, nil
}

// OpenRing maps a ring a previous terminald made, from the descriptor the
// holder kept. It checks the seals and the header before trusting the
// size: a descriptor that could still shrink could fault terminald.
func OpenRing(f *os.File) (*Ring, error) {
	seals, err := unix.FcntlInt(f.Fd(), unix.F_GET_SEALS, 0)
	if err != nil {
		return nil, fmt.Errorf("ring %s: read its seals: %w", f.Name(), err)
	}
	if seals&(unix.F_SEAL_SHRINK|unix.F_SEAL_GROW) != unix.F_SEAL_SHRINK|unix.F_SEAL_GROW {
		return nil, fmt.Errorf("ring %s: not sealed against resizing (seals %#x)", f.Name(), seals)
	}
	r, err := mapRing(f, f.Name())
	if err != nil {
		return nil, err
	}
	if binary.LittleEndian.Uint64(r.mem[offMagic:]) != ringMagic ||
		binary.LittleEndian.Uint64(r.mem[offSize:]) != uint64(len(r.data)) {
		r.Close()
		return nil, fmt.Errorf("ring %s: bad header", f.Name())
	}
	return r, nil
}

func mapRing(f *os.File, name string) (*Ring, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("ring %s: stat: %w", name, err)
	}
	if fi.Size() <= ringHeaderSize || fi.Size() > ringHeaderSize+1<<30 {
		return nil, fmt.Errorf("ring %s: size %d is not a ring's", name, fi.Size())
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("ring %s: mmap: %w", name, err)
	}
	return &Ring{f: f, mem: mem, data: mem[ringHeaderSize:]}, nil
}

// total is the header's count of bytes ever written. The mapping is page
// aligned, so the word is 8-byte aligned.
func (r *Ring) total() *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&r.mem[offTotal]))
}

// Write appends p, overwriting the oldest bytes. It never fails: the
// ring is memory.
func (r *Ring) Write(p []byte) {
	size := uint64(len(r.data))
	for len(p) > 0 {
		n := min(len(p), MaxChunk)
		t := r.total().Load()
		at := t % size
		c := copy(r.data[at:], p[:n])
		copy(r.data, p[c:n])
		// Published only after the copy: a reader after a crash trusts
		// nothing past the old total.
		r.total().Store(t + uint64(n))
		p = p[n:]
	}
}

// Contents returns the output the ring still holds, oldest first, and how
// many earlier bytes it no longer holds. Once the ring has wrapped, the
// oldest MaxChunk bytes are left out as well: a writer killed mid-copy may
// have overwritten them already.
func (r *Ring) Contents() (data []byte, lost uint64) {
	size := uint64(len(r.data))
	t := r.total().Load()
	keep := t
	if t > size-MaxChunk {
		keep = size - MaxChunk
	}
	out := make([]byte, keep)
	start := (t - keep) % size
	c := copy(out, r.data[start:])
	copy(out[c:], r.data)
	return out, t - keep
}

// Total is how many bytes were ever written to the ring.
func (r *Ring) Total() uint64 { return r.total().Load() }

// File is the memfd, to hand to the holder.
func (r *Ring) File() *os.File { return r.f }

// Close unmaps the ring and closes terminald's descriptor; the holder's
// copy keeps the memory.
func (r *Ring) Close() error {
	var errs []error
	if r.mem != nil {
		errs = append(errs, unix.Munmap(r.mem))
		r.mem, r.data = nil, nil
	}
	errs = append(errs, r.f.Close())
	return errors.Join(errs...)
}
