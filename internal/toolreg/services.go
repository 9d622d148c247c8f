package toolreg

// The proto packages whose services have tools are imported here, so that
// their descriptors are registered and Default holds every tool whichever
// daemons a binary links.
import (
	_ "github.com/phantom-dev/phantom/proto/phantom/editor/v1"
	_ "github.com/phantom-dev/phantom/proto/phantom/git/v1"
	_ "github.com/phantom-dev/phantom/proto/phantom/lsp/v1"
	_ "github.com/phantom-dev/phantom/proto/phantom/terminal/v1"
)
