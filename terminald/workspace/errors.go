package workspace

import (
	"fmt"

	"github.com/phantom-dev/phantom/internal/errdefs"
)

func invalid(field, why string) error {
	return fmt.Errorf("%s: %s: %w", field, why, errdefs.ErrInvalidArgument)
}

func notFound(kind, id string) error {
	return fmt.Errorf("%s %q: %w", kind, id, errdefs.ErrNotFound)
}
