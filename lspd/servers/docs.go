package servers

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/phantom-dev/phantom/lspd/lsp"
)

// maxFile bounds the files given to servers: a larger one is surely not
// source a person edits.
const maxFile = 16 << 20

// Stamp identifies a file's content on disk. Size and mtime alone miss an
// edit within the file system's timestamp granularity that keeps the size
// (a one-character fix), so the content's hash is part of it.
type Stamp struct {
	Size  int64
	MTime int64 // nanoseconds since the epoch
	Hash  string
}

// IsZero reports whether s names no version.
func (s Stamp) IsZero() bool { return s == Stamp{} }

// readFile reads path and stamps what it read.
func readFile(path string) ([]byte, Stamp, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Stamp{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, Stamp{}, err
	}
	if !fi.Mode().IsRegular() {
		return nil, Stamp{}, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > maxFile {
		return nil, Stamp{}, fmt.Errorf("%s is %d bytes, more than the %d a language server is given", path, fi.Size(), maxFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, Stamp{}, fmt.Errorf("read %s: %w", path, err)
	}
	sum := sha256.Sum256(b)
	return b, Stamp{Size: int64(len(b)), MTime: fi.ModTime().UnixNano(), Hash: hex.EncodeToString(sum[:8])}, nil
}

// doc is a file lspd opened in the server. Its versions count up across
// server restarts; stamps remembers which disk content each recent
// version carried, so a versioned publishDiagnostics says exactly which
// disk version it reflects.
type doc struct {
	version int32
	stamp   Stamp     // of the latest version sent
	sent    time.Time // when the latest version was sent
	open    bool      // opened in the current server process
	stamps  map[int32]Stamp
}

// keepStamps bounds doc.stamps.
const keepStamps = 16

func (d *doc) advance(st Stamp, now time.Time) int32 {
	d.version++
	d.stamp, d.sent = st, now
	if d.stamps == nil {
		d.stamps = map[int32]Stamp{}
	}
	d.stamps[d.version] = st
	delete(d.stamps, d.version-keepStamps)
	return d.version
}

// fileDiags are the last diagnostics reported for a file, with the disk
// version they were computed from.
type fileDiags struct {
	items    []lsp.Diagnostic
	version  int32 // the doc version they reflect; 0 for files lspd did not open
	reflects Stamp // zero when unknown
	at       time.Time
}

// FileReport is what is known of one file.
type FileReport struct {
	// Path is the file's absolute path.
	Path string
	// ServerID is the server reporting on it.
	ServerID string
	// Disk is the file on disk when the report was made.
	Disk Stamp
	// Reflects is the disk version the diagnostics were computed from;
	// zero when the server has not reported on it.
	Reflects Stamp
	// Settled is true when the diagnostics reflect Disk and the server is
	// idle: no progress and a quiet period passed.
	Settled bool
	// Diagnostics as the server reported them.
	Diagnostics []lsp.Diagnostic
}

// Current reports whether the diagnostics reflect the file on disk.
func (f FileReport) Current() bool { return !f.Reflects.IsZero() && f.Reflects == f.Disk }
