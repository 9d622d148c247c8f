package worktree

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkList50 lists a repository with 50 worktrees (plus the main one),
// some dirty, some with commits of their own, including the dirty, merged
// and ahead/behind checks. The target is a median under 100 ms.
func BenchmarkList50(b *testing.B) {
	f := newFixture(b)
	f.tabs.set(Tab{ID: "t1", Directory: f.dir})
	for i := range 50 {
		wt := f.addWT(fmt.Sprintf("b/%02d", i), filepath.Join(f.folder(), fmt.Sprintf("w%02d", i)))
		switch i % 5 {
		case 0:
			f.write(filepath.Join(wt, "README"), "dirty\n")
		case 1:
			f.commit(wt, "own.txt")
		}
	}
	f.commit(f.dir, "main2.txt")
	ctx := f.ctx()
	b.ResetTimer()
	for b.Loop() {
		l, err := f.m.List(ctx, f.dir, "")
		if err != nil || len(l.Worktrees) != 51 {
			b.Fatalf("List: %d, %v", len(l.Worktrees), err)
		}
	}
}
