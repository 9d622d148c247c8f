package gitd

import (
	"github.com/phantom-dev/phantom/gitd/worktree"
	gitv1 "github.com/phantom-dev/phantom/proto/phantom/git/v1"
)

// Converters between worktree's types and the wire types.

func toWorktree(w worktree.Worktree) *gitv1.Worktree {
	return &gitv1.Worktree{
		Path: w.Path, Branch: w.Branch, Detached: w.Detached, Head: w.Head, Main: w.Main, Bare: w.Bare,
		Locked: w.Locked, LockReason: w.LockReason, Prunable: w.Prunable, PrunableReason: w.PrunableReason,
		Dirty: w.Dirty, ChangedFiles: int32(w.Changed),
		ComparedTo: w.ComparedTo, Ahead: int32(w.Ahead), Behind: int32(w.Behind), UpstreamGone: w.UpstreamGone,
		Merged: w.Merged, TerminalIds: w.Tabs,
	}
}

func toWorktrees(ws []worktree.Worktree) []*gitv1.Worktree {
	out := make([]*gitv1.Worktree, len(ws))
	for i, w := range ws {
		out[i] = toWorktree(w)
	}
	return out
}

var actionKinds = map[gitv1.TidyAction_Kind]worktree.ActionKind{
	gitv1.TidyAction_KIND_PRUNE:  worktree.Prune,
	gitv1.TidyAction_KIND_REPAIR: worktree.Repair,
	gitv1.TidyAction_KIND_MOVE:   worktree.Move,
	gitv1.TidyAction_KIND_LOCK:   worktree.Lock,
	gitv1.TidyAction_KIND_UNLOCK: worktree.Unlock,
}

func fromActions(as []*gitv1.TidyAction) []worktree.Action {
	out := make([]worktree.Action, len(as))
	for i, a := range as {
		out[i] = worktree.Action{Kind: actionKinds[a.GetKind()], Path: a.GetPath(), NewPath: a.GetNewPath(), Reason: a.GetReason()}
	}
	return out
}

func toAction(a worktree.Action) *gitv1.TidyAction {
	out := &gitv1.TidyAction{Path: a.Path, NewPath: a.NewPath, Reason: a.Reason}
	for k, v := range actionKinds {
		if v == a.Kind {
			out.Kind = k
		}
	}
	return out
}

func toItems(its []worktree.Item) []*gitv1.TidyItem {
	out := make([]*gitv1.TidyItem, len(its))
	for i, it := range its {
		out[i] = &gitv1.TidyItem{Path: it.Path, Branch: it.Branch, Detail: it.Detail}
	}
	return out
}

func toReport(r worktree.Report) *gitv1.TidyReport {
	return &gitv1.TidyReport{
		Prunable: toItems(r.Prunable), Merged: toItems(r.Merged), Orphaned: toItems(r.Orphaned),
		Dirty: toItems(r.Dirty), Locked: toItems(r.Locked),
	}
}

func toResults(rs []worktree.Result) []*gitv1.TidyResult {
	out := make([]*gitv1.TidyResult, len(rs))
	for i, r := range rs {
		out[i] = &gitv1.TidyResult{Action: toAction(r.Action), Outcome: r.Outcome}
	}
	return out
}
