// Package proto holds Phantom's protobuf definitions; the Go code generated
// from them sits beside each .proto. This test fails when that code is stale.
package proto

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedCodeIsCurrent regenerates every .pb.go into a temporary
// directory with the pinned plugins and compares it with what is committed.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tools := filepath.Join(root, ".tools", "bin")
	if _, err := os.Stat(filepath.Join(tools, "buf")); err != nil {
		t.Fatalf("buf is not installed in %s: run ./scripts/setup", tools)
	}
	out := t.TempDir()
	plugin := func(name string) map[string]any {
		return map[string]any{"local": filepath.Join(tools, name), "out": out, "opt": "paths=source_relative"}
	}
	tmpl, _ := json.Marshal(map[string]any{
		"version": "v2",
		"plugins": []any{plugin("protoc-gen-go"), plugin("protoc-gen-go-grpc")},
	})
	cmd := exec.Command(filepath.Join(tools, "buf"), "generate", "--path", "proto/phantom", "--template", string(tmpl))
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("buf generate: %v\n%s", err, b)
	}
	n := 0
	err = filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		rel, _ := filepath.Rel(out, path)
		want, _ := os.ReadFile(path)
		got, err := os.ReadFile(filepath.Join(root, "proto", rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("proto/%s is stale or missing: run `make generate` and commit the result", rel)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("buf generate produced no Go files")
	}
}
