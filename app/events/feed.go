package events

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/event"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Feed reads the event feed of the credential pinned in ctx (GET /events).
type Feed struct{ authz *policy.Enforcer }

// Filter narrows GET /events. Types (sorted, no repeats) binds the cursor; Since only places
// the first page of a walk (a cursor continues where it is), so it is left out of the binding:
// a client polls on with the cursor alone.
type Filter struct {
	Types []string
	Since *time.Time `json:"-"`
}

// bySeq orders the feed in commit order. seq is unique in a company; id only completes the key.
var bySeq = paging.Keyset[*ent.Event]{Column: event.FieldSeq, Kind: paging.Int,
	Value: func(e *ent.Event) (any, uuid.UUID) { return e.Seq, e.ID }}

// List returns a page of the events of the types f names (every type the credential may
// receive when it names none) in commit order: after the cursor's event, or on a first page
// from f.Since (from the start without it).
func (f *Feed) List(ctx context.Context, flt Filter, page paging.Page) ([]*ent.Event, error) {
	k, err := bySeq.Apply(page)
	if err != nil {
		return nil, err
	}
	q, err := Visible(ctx, f.authz, flt.Types)
	if err != nil {
		return nil, err
	}
	if page.After == nil && flt.Since != nil { // a first page; a cursor from an empty feed starts at the beginning
		q.Where(event.OccurredAtGTE(*flt.Since))
	}
	rows, err := q.Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	return rows, nil
}

// Head is the cursor key of the newest committed event of the company (nil when there is
// none): where a walk whose first page found nothing continues, so that it does not replay
// what since or types skipped.
func (f *Feed) Head(ctx context.Context) ([]string, error) {
	e, err := tenancy.Client(ctx).Event.Query().Where(event.SeqNotNil()).Order(ent.Desc(event.FieldSeq)).First(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("newest event: %w", err)
	}
	return bySeq.Key(e), nil
}
