package lsp

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
)

// The protocol types lspd uses; fields it does not need are left out.

// URI is a file:// document URI.
type URI string

// FileURI is the URI of an absolute path.
func FileURI(path string) URI {
	return URI((&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String())
}

// Path is the file path of a file:// URI.
func (u URI) Path() (string, error) {
	p, err := url.Parse(string(u))
	if err != nil {
		return "", fmt.Errorf("document URI %q: %w", u, err)
	}
	if p.Scheme != "file" {
		return "", fmt.Errorf("document URI %q is not a file URI", u)
	}
	return filepath.Clean(filepath.FromSlash(p.Path)), nil
}

// Position is a zero-based line and UTF-16 character offset.
type Position struct {
	Line      uint32 `json:"line"`
	Character uint32 `json:"character"`
}

// Range is a span of a document.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Diagnostic is one problem.
type Diagnostic struct {
	Range    Range           `json:"range"`
	Severity int             `json:"severity,omitempty"`
	Code     json.RawMessage `json:"code,omitempty"`
	Source   string          `json:"source,omitempty"`
	Message  string          `json:"message"`
}

// PublishDiagnosticsParams is textDocument/publishDiagnostics.
type PublishDiagnosticsParams struct {
	URI         URI          `json:"uri"`
	Version     *int32       `json:"version,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// ProgressParams is $/progress; Value.Kind is begin, report or end.
type ProgressParams struct {
	Token json.RawMessage `json:"token"`
	Value struct {
		Kind  string `json:"kind"`
		Title string `json:"title,omitempty"`
	} `json:"value"`
}

// TextDocumentItem is a document opened with didOpen.
type TextDocumentItem struct {
	URI        URI    `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int32  `json:"version"`
	Text       string `json:"text"`
}

// VersionedTextDocumentIdentifier names a document at a version.
type VersionedTextDocumentIdentifier struct {
	URI     URI   `json:"uri"`
	Version int32 `json:"version"`
}

// TextDocumentIdentifier names a document.
type TextDocumentIdentifier struct {
	URI URI `json:"uri"`
}

// DidOpenParams is textDocument/didOpen.
type DidOpenParams struct {
	TextDocument TextDocumentItem `json:"textDocument"`
}

// ContentChange replaces the whole document (full sync).
type ContentChange struct {
	Text string `json:"text"`
}

// DidChangeParams is textDocument/didChange.
type DidChangeParams struct {
	TextDocument   VersionedTextDocumentIdentifier `json:"textDocument"`
	ContentChanges []ContentChange                 `json:"contentChanges"`
}

// DidCloseParams is textDocument/didClose.
type DidCloseParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
}

// File change types of workspace/didChangeWatchedFiles.
const (
	FileCreated = 1
	FileChanged = 2
	FileDeleted = 3
)

// FileEvent is one change on disk.
type FileEvent struct {
	URI  URI `json:"uri"`
	Type int `json:"type"`
}

// DidChangeWatchedFilesParams is workspace/didChangeWatchedFiles.
type DidChangeWatchedFilesParams struct {
	Changes []FileEvent `json:"changes"`
}

// DocumentDiagnosticParams is textDocument/diagnostic (pull).
type DocumentDiagnosticParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
}

// DocumentDiagnosticReport is the answer to textDocument/diagnostic;
// Kind "full" carries Items, "unchanged" means the previous ones stand.
type DocumentDiagnosticReport struct {
	Kind  string       `json:"kind"`
	Items []Diagnostic `json:"items"`
}

// ServerCapabilities are the capabilities lspd looks at.
type ServerCapabilities struct {
	// DiagnosticProvider is set when the server answers pull requests.
	DiagnosticProvider json.RawMessage `json:"diagnosticProvider,omitempty"`
}

// InitializeResult is the answer to initialize.
type InitializeResult struct {
	Capabilities ServerCapabilities `json:"capabilities"`
	ServerInfo   *struct {
		Name    string `json:"name"`
		Version string `json:"version,omitempty"`
	} `json:"serverInfo,omitempty"`
}

// WorkspaceFolder is one root.
type WorkspaceFolder struct {
	URI  URI    `json:"uri"`
	Name string `json:"name"`
}

// InitializeParams builds initialize's params for a client that handles
// progress, pull and versioned push diagnostics and watched files.
func InitializeParams(pid int, root string, options json.RawMessage) map[string]any {
	p := map[string]any{
		"processId":        pid,
		"clientInfo":       map[string]string{"name": "phantom-lspd"},
		"rootUri":          FileURI(root),
		"rootPath":         root,
		"workspaceFolders": []WorkspaceFolder{{URI: FileURI(root), Name: filepath.Base(root)}},
		"capabilities": map[string]any{
			"window": map[string]any{"workDoneProgress": true},
			"workspace": map[string]any{
				"configuration":          true,
				"workspaceFolders":       true,
				"didChangeWatchedFiles":  map[string]any{"dynamicRegistration": true},
				"didChangeConfiguration": map[string]any{"dynamicRegistration": false},
			},
			"textDocument": map[string]any{
				"synchronization":    map[string]any{"didSave": false, "dynamicRegistration": false},
				"publishDiagnostics": map[string]any{"versionSupport": true, "relatedInformation": false},
				"diagnostic":         map[string]any{"dynamicRegistration": false},
			},
		},
	}
	if len(options) > 0 {
		p["initializationOptions"] = options
	}
	return p
}

// DocumentSymbolParams is textDocument/documentSymbol.
type DocumentSymbolParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
}
