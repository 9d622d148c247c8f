package policy

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/phantom-dev/phantom/internal/errdefs"
	"github.com/phantom-dev/phantom/internal/keys"
)

// sendKeys is send_keys's rule: keys that do not parse (internal/keys,
// the parser `phantom send` uses too) or a tab whose program ended fail
// before any sheet; a busy tab is fine (C-c is for busy tabs). The sheet
// spells the keys as they would be typed, control keys as their pictures
// (Enter ␍, C-c ␃), as `phantom send`'s always did.
var sendKeys = special{
	subject: []protoreflect.Name{"keys", "literal"},
	check: func(t TabInfo, v []protoreflect.Value) error {
		if _, err := parseKeys(v); err != nil {
			return err
		}
		return checkOpen(t)
	},
	say: func(_ *evaluation, target string, v []protoreflect.Value, why string) string {
		b, _ := parseKeys(v) // checked
		s := quote(keys.Spell(b)) + " typed into " + target
		if v[1].Bool() {
			s += " (literal: every key typed as text)"
		}
		return s + ", " + why
	},
	typed: func(v []protoreflect.Value) string {
		b, _ := parseKeys(v)
		return string(b)
	},
}

// closeTerminal is close_terminal's rule: the sheet says the tab closes
// and what runs in it ends.
var closeTerminal = special{
	say: func(e *evaluation, target string, _ []protoreflect.Value, why string) string {
		s := "close " + target + " and end what runs in it"
		if t, ok := e.tab(e.target); ok && t.Foreground != "" && !t.Exited {
			s += " (" + quote(t.Foreground) + ")"
		}
		return s + ", " + why
	},
}

// parseKeys reads send_keys's subject values (keys, literal) into the
// bytes they type.
func parseKeys(v []protoreflect.Value) ([]byte, error) {
	l := v[0].List()
	args := make([]string, l.Len())
	for i := range l.Len() {
		args[i] = l.Get(i).String()
	}
	b, err := keys.Parse(args, v[1].Bool())
	if err != nil {
		return nil, fmt.Errorf("argument keys: %v: %w", err, errdefs.ErrInvalidArgument)
	}
	return b, nil
}

// checkOpen refuses a tab whose program has ended: nothing reads what is
// typed there.
func checkOpen(t TabInfo) error {
	if t.Exited {
		return fmt.Errorf("%s has exited (its program ended), so nothing can be typed into it; "+
			"close_terminal closes it, create_terminal opens a new tab: %w", tabForAgent(t), errdefs.ErrFailedPrecondition)
	}
	return nil
}
