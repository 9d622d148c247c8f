package policy

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

// checkCommand refuses a command that run_command could not type as one
// command line: an empty one, or one holding a newline, carriage return or
// other control character, which would act on the terminal (press Enter,
// complete, interrupt, start an escape sequence) instead of being typed.
func checkCommand(cmd string) error {
	if strings.TrimSpace(cmd) == "" {
		return fmt.Errorf("argument command is empty: give the command line to type: %w", errdefs.ErrInvalidArgument)
	}
	for i, r := range cmd {
		switch {
		case r == '\n' || r == '\r':
			return fmt.Errorf("argument command contains a line break (%s at byte %d): run_command types one command line "+
				"and presses Enter once; join several commands with && or ; on one line: %w", escapeRune(r), i, errdefs.ErrInvalidArgument)
		case unicode.IsControl(r):
			return fmt.Errorf("argument command contains the control character %s at byte %d, which would act on the terminal "+
				"instead of being typed; leave it out or write it in the shell's own quoting, such as $'\\t': %w",
				escapeRune(r), i, errdefs.ErrInvalidArgument)
		}
	}
	return nil
}

// checkTypable refuses a tab run_command cannot type into: one whose
// program has ended, or one busy with a program instead of waiting at its
// prompt.
func checkTypable(t TabInfo) error {
	switch {
	case t.Exited:
		return fmt.Errorf("%s has exited (its program ended), so nothing can be typed into it; "+
			"create_terminal opens a new tab: %w", tabForAgent(t), errdefs.ErrFailedPrecondition)
	case !t.Idle:
		running := "a program"
		if t.Foreground != "" {
			running = quote(t.Foreground)
		}
		return fmt.Errorf("%s is busy: %s is running in it, and run_command types only at a waiting prompt; "+
			"wait until list_terminals shows it idle, or open a tab with create_terminal: %w",
			tabForAgent(t), running, errdefs.ErrFailedPrecondition)
	}
	return nil
}

func escapeRune(r rune) string {
	q := strconv.QuoteRuneToASCII(r)
	return q[1 : len(q)-1]
}
