package emails

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Outgoing is one message to send from a company mailbox: what POST /emails and the other
// areas (correspondence cases, later portal invitations, signatures, funnels) hand to Send.
type Outgoing struct {
	MailboxID uuid.UUID
	To, Cc    []schematype.MailAddress
	Bcc       []schematype.MailAddress
	Subject   string
	Text      string
	HTML      *string
	// DocumentIDs are documents of the company attached to the message (25 MB in all).
	DocumentIDs []uuid.UUID
	// ContactID and LeadID link the message (and its thread) and put it on the timeline.
	ContactID, LeadID *uuid.UUID
	// ReplyToEmailID makes the message a reply in that message's thread.
	ReplyToEmailID *uuid.UUID
	TemplateID     *uuid.UUID
	Marketing      bool
	Tracking       bool
	// Free sends without taking points (correspondence with insurers).
	Free bool
}

// errNotBuilt is returned until the send path of issue 21 is in.
var errNotBuilt = errors.New("emails: sending is not built yet")

// Send checks o, takes its points, composes and stores the message as queued in its thread
// (linked, on the timeline) in the transaction of ctx, and queues its delivery after the
// commit. (send.go implements it.)
func (s *Service) Send(ctx context.Context, o Outgoing) (*ent.Email, error) {
	return s.send(ctx, o)
}

var sendImpl func(s *Service, ctx context.Context, o Outgoing) (*ent.Email, error)

func (s *Service) send(ctx context.Context, o Outgoing) (*ent.Email, error) {
	if sendImpl == nil {
		return nil, errNotBuilt
	}
	return sendImpl(s, ctx, o)
}
