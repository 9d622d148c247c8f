// Package editor is editord's real work: one Neovim per Phantom window,
// started in a new tab of that window on first need, and the operations
// agents ask of it (list the panes, open a file, split, focus or close a
// tab, reveal a line). Every operation runs inside Neovim as one Lua chunk
// of API calls (ops.lua), so the human's typing is never interleaved with
// it and insert mode survives; none writes a buffer or discards a change.
package editor

// File is an open file: one of the editor's tabs.
type File struct {
	// TabID is Neovim's buffer number.
	TabID int `msgpack:"tab_id"`
	// Path is the buffer's absolute name; empty for an unnamed buffer.
	Path string `msgpack:"path"`
	// Modified is true when it has changes not on disk.
	Modified bool `msgpack:"modified"`
	// Lines is its line count.
	Lines int `msgpack:"lines"`
}

// Pane is a Neovim window of the current tab page.
type Pane struct {
	ID      int  `msgpack:"id"`
	Focused bool `msgpack:"focused"`
	// Row, Col, Width and Height place it on screen, from 0.
	Row    int  `msgpack:"row"`
	Col    int  `msgpack:"col"`
	Width  int  `msgpack:"width"`
	Height int  `msgpack:"height"`
	File   File `msgpack:"file"`
	// Cursor is the cursor's line; Top and Bottom the lines on screen.
	Cursor int `msgpack:"cursor"`
	Top    int `msgpack:"top"`
	Bottom int `msgpack:"bottom"`
}

// State is what list_panes shows.
type State struct {
	// Mode is Neovim's mode, e.g. "n" or "i".
	Mode  string `msgpack:"mode"`
	Panes []Pane `msgpack:"panes"`
	Tabs  []File `msgpack:"tabs"`
}

// Split is where open_file_in_split puts the new pane.
type Split string

// The splits; NoSplit opens in the focused pane.
const (
	NoSplit Split = ""
	Right   Split = "right"
	Below   Split = "below"
)

// OpenSpec says what to open where.
type OpenSpec struct {
	// Path is absolute, or relative to Dir.
	Path, Dir string
	// Line is where to put the cursor, from 1; 0 leaves it.
	Line int
	// Create opens an empty buffer for a missing file instead of failing.
	Create bool
	Split  Split
}

// RevealSpec says which line to reveal.
type RevealSpec struct {
	// Path (absolute, or relative to Dir) or TabID names the file.
	Path, Dir, TabID string
	// Line is the line, from 1.
	Line int
	// Message is shown beside the line.
	Message string
}

// Opened is where a file was shown.
type Opened struct {
	Pane Pane
	// Line is the cursor line after clamping; 0 when none was asked.
	Line int
	// Created is true when the file did not exist and an empty buffer was
	// opened for it.
	Created bool
	// Notes says what did not go exactly as asked.
	Notes []string
}
