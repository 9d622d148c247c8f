package policy

import (
	"strings"
	"testing"
)

// TestIncomplete: a line the shell would hold open for more is refused
// (the human's next line would join it); a complete one passes.
func TestIncomplete(t *testing.T) {
	for _, tc := range []struct {
		cmd, why string // why: "" for complete, else a word of the reason
	}{
		{"echo hi", ""},
		{"go test ./... && echo done", ""},
		{"echo 'a;b' \"c|d\" `date` $'it\\'s'", ""},
		{"for f in *.go; do echo $f; done", ""},
		{"if true; then echo y; else echo n; fi", ""},
		{"while read l; do echo $l; done < file", ""},
		{"case $x in a) echo a;; *) echo b;; esac", ""},
		{"echo $(( 1 + (2) )) $(pwd) a=(1 2)", ""},
		{"{ echo a; echo b; } > out", ""},
		{"if true; echo y; end", ""}, // fish
		{"begin; echo a; end", ""},   // fish
		{"echo done fi end", ""},     // not where a command starts
		{"cat <<< word", ""},
		{"echo $((1<<4)) ${x:-\"}\"} ${HOME}", ""},
		{"f() { echo hi; }; function g { :; }", ""},
		{"echo ${HOME", "${"},
		{"[[ -n x", "[["},
		{"f() { echo hi", "{"},
		{"end; if true; then echo hi", "compound"},
		{"echo hi # a comment", ""},
		{"echo hi # it's", "single-quoted"}, // zsh without interactivecomments
		{"echo rt23 \\", "backslash"},
		{"echo 'open", "single-quoted"},
		{"echo \"open", "double-quoted"},
		{"echo `open", "backquoted"},
		{"echo $'it\\'s", "single-quoted"},
		{"make |", "ends with |"},
		{"make &&", "ends with &&"},
		{"false ||", "ends with ||"},
		{"cat <<EOF", "here-document"},
		{"( echo a", "group"},
		{"{ echo a;", "group"},
		{"echo $(pwd", "group"},
		{"if true; then echo y", "compound"},
		{"for f in a b; do echo $f", "compound"},
		{"while true; do :", "compound"},
		{"case x in", "compound"},
		{"begin; echo a", "compound"},
	} {
		got := incomplete(tc.cmd)
		if (got == "") != (tc.why == "") || !strings.Contains(got, tc.why) {
			t.Errorf("incomplete(%q) = %q, want %q", tc.cmd, got, tc.why)
		}
	}
}

// FuzzIncomplete: any text, no panic; a line with a trailing backslash is
// never complete.
func FuzzIncomplete(f *testing.F) {
	for _, s := range []string{"echo hi", "if x; then", "a 'b", "$((", "cat <<E", "`", "\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		why := incomplete(s)
		if strings.HasSuffix(s, " \\") && !strings.HasSuffix(s, "\\\\") && why == "" && !strings.ContainsAny(s, "'\"`#") {
			t.Errorf("incomplete(%q) = \"\": a trailing backslash continues the line", s)
		}
	})
}
