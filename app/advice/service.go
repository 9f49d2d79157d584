// Package advice serves /advice-records: IDD consultation documentation (§ 61, § 62 VVG) of a
// contact, its protocol PDF rendered from the company's advice_protocol template, locked once
// a signature request holding that protocol completed.
//
// STUB: the contract; the owner fills it in.
package advice

import (
	"context"
	"time"

	"github.com/brokerdesk/brokerdesk/app/doctemplates"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/ent"
)

// Service runs the advice record use cases.
type Service struct {
	events    *events.Service
	templates *doctemplates.Service
	now       func() time.Time
}

// NewService returns the service.
func NewService(ev *events.Service, tpl *doctemplates.Service, now func() time.Time) *Service {
	return &Service{events: ev, templates: tpl, now: now}
}

// LockSigned locks the advice records whose protocol is among the documents of the completed
// signature request r; it runs in the transaction that completes r (signatures.OnCompleted).
func (s *Service) LockSigned(ctx context.Context, r *ent.SignatureRequest) error { return nil }
