package errs

import (
	"fmt"

	"github.com/brokerdesk/brokerdesk/ent"
)

// FromEnt is the one translation of an ent lookup's error (Kratos's sqlcon.HandleError): a row
// that is not there, including one the privacy rules or row-level security hide (the same thing
// to the reader), is a 404 "<what> not found"; any other error is wrapped with what was looked
// up. nil stays nil.
//
//	t, err := db.Task.Get(ctx, id)
//	if err != nil {
//		return nil, errs.FromEnt(err, "task %s", id)
//	}
func FromEnt(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	what := fmt.Sprintf(format, args...)
	if ent.IsNotFound(err) {
		return NotFound("%s not found", what)
	}
	return fmt.Errorf("%s: %w", what, err)
}
