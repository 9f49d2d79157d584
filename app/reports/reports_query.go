package reports

import (
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
)

// The cursor key of the two paged reports whose keyset SQL computes (renewals, cross-selling).
// Dates (asOf, from, to) are httpx.QueryDate, QueryWindow and Today, shared with the commission
// reports.

// afterKey is the cursor key of a raw-SQL keyset (sort value, id) the pipeline opened: ok is
// false on the first page. The cursor was sealed and bound to this list by the pager, so a key
// of another shape means the list's order changed between releases: 422 invalid_cursor.
func afterKey(p paging.Page) (value string, id uuid.UUID, ok bool, err error) {
	if len(p.After) == 0 {
		return "", uuid.Nil, false, nil
	}
	bad := errs.InvalidField("cursor", "invalid_cursor", "is not a cursor of this list")
	if len(p.After) != 2 {
		return "", uuid.Nil, false, bad
	}
	id, perr := uuid.Parse(p.After[1])
	if perr != nil {
		return "", uuid.Nil, false, bad
	}
	return p.After[0], id, true, nil
}
