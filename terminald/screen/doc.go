// Package screen is Phantom's VT screen engine: it turns the byte stream a
// program writes to its PTY into a grid of cells plus a scrollback history,
// the way an xterm-compatible terminal would.
//
// # Design
//
// Parsing is a hand-written, byte-level VT500-style state machine (ground,
// escape, CSI, OSC, DCS/SOS/PM/APC string states) driven directly from
// [Screen.Write]. Its state lives in the Screen, so escape sequences and UTF-8
// sequences may be split across Write calls at any byte. In the ground state
// runs of printable ASCII are found with a tight scan and stored into the
// current row in bulk; there are no interface calls and no allocations per
// byte, and none in steady state. Bulk output (text, common SGRs, CR, LF)
// is handled by one loop, groundCompact, that keeps the cursor column in a
// local; short SGR sequences are looked up in a small per-screen cache of
// their parsed effect (cachedSGR), longer ones parsed straight into that
// effect (fastSGR). Every fast path stops before anything it does not
// handle and leaves it to the general code, which gives the same result:
// the tests feed each input whole and split at every byte to check this.
//
// The visible screen is a slice of row pointers, each row a []cell of fixed
// 16-byte cells (rune, colours, attributes, width). Scrolling rotates row
// pointers; a full-screen scroll slides the slice over a larger backing
// array instead (grid.scrollFull). Combining marks are rare and kept in a small per-row map so that
// ordinary cells stay small.
//
// Most rows of bulk output (cat, logs, compilers) are written once, left to
// right, and then scroll away. Such a row stays "compact" (compact.go): its
// UTF-8 text and style runs are appended directly in the scrollback's
// encoding and its cells are never touched; scrolling it off copies two
// byte slices. The first operation that needs cells (overwriting, partial
// erase, insert/delete, reading it with Row) materialises the row.
//
// Scrollback never stores cells. When a row scrolls off the top of the main
// screen it is compacted into its UTF-8 text followed by a short list of
// style runs, appended to 64 KiB arena chunks. Lines are indexed by a ring
// buffer, so dropping the oldest line is O(1); a chunk is recycled once the
// last line stored in it has been dropped. Each line remembers whether it
// was soft-wrapped, so [Screen.LastLines] joins wrapped rows back into one
// logical line.
//
// Terminal queries (DA1, DA2, DSR, DECRQM, OSC 10/11, XTVERSION, window size)
// are answered through [Options.Reply]; titles, cwd (OSC 7), OSC 133 prompt
// marks and the bell are reported through [Options.OnEvent]. Both callbacks
// are called synchronously from inside Write.
//
// # Concurrency
//
// A Screen is not safe for concurrent use: the caller must serialise all
// calls (typically by holding a mutex around Write and the readers). The
// Reply and OnEvent callbacks run on the writer's goroutine while that lock
// is held, so they must not block and must not call back into the Screen
// from another goroutine.
package screen
