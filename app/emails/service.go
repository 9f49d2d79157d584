package emails

import (
	"time"

	"github.com/brokerdesk/brokerdesk/app/events"
)

// Service runs the e-mail use cases for the company pinned in ctx, in the request's (or the
// worker's) transaction (tenancy.Client).
type Service struct {
	m      *Module
	events *events.Service
	now    func() time.Time
}
