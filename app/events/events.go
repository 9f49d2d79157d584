// Package events is the outbox: every write records its event here, in the same transaction
// as the change, and /events serves them in commit order. Every area writes to it; it imports
// no area.
package events

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Type is one kind of event: its name, what it means and the scope needed to receive it.
type Type struct {
	Type        string `json:"type"`
	Description string `json:"description"`
	Scope       string `json:"scope"`
}

// Types lists every event type the service emits. Record refuses a type missing here, so the
// list GET /event-types serves cannot fall behind.
var Types = []Type{
	{"company.updated", "The company's data or licensed features changed; data is the Company.", "company:read"},
	{"contact.created", "A contact was created (also by converting a lead); data is the Contact.", "contacts:read"},
	{"contact.updated", "A contact changed (also by converting a lead into it); data is the Contact.", "contacts:read"},
	{"contract.created", "A contract was created (API, external upsert or portfolio transfer); data is the Contract.", "contracts:read"},
	{"contract.deleted", "A contract was deleted (also with its contact); data is the Contract as it was.", "contracts:read"},
	{"contract.updated", "A contract changed (PATCH, external upsert or portfolio transfer); data is the Contract.", "contracts:read"},
	{"lead.converted", "A lead was converted into a contact; data is the Lead.", "leads:read"},
	{"lead.created", "A lead was created (intake, API or external upsert); data is the Lead.", "leads:read"},
	{"lead.deleted", "A lead was deleted; data is the Lead as it was.", "leads:read"},
	{"lead.updated", "A lead changed (a duplicate submission merged into it, a PATCH, a stage move); data is the Lead.", "leads:read"},
	{"ping", "Sent by POST /webhook-endpoints/{id}/test to that endpoint only, never to the feed; data is {webhookEndpointId}.", "webhooks:read"},
	{"user.created", "A user was added to the company; data is the User.", "users:read"},
	{"user.updated", "A user's data, role or status changed; data is the User.", "users:read"},
	{"webhook_endpoint.disabled", "The server disabled a webhook endpoint: its URL answered 410 Gone, or its deliveries failed for five days in a row; data is the WebhookEndpoint.", "webhooks:read"},
}

// Known reports whether t is an event type.
func Known(t string) bool {
	return slices.ContainsFunc(Types, func(x Type) bool { return x.Type == t })
}

// ScopeOf returns the scope needed to receive events of type t.
func ScopeOf(t string) string {
	for _, x := range Types {
		if x.Type == t {
			return x.Scope
		}
	}
	return ""
}

// Service records events.
type Service struct{}

// NewService returns the service.
func NewService() *Service { return &Service{} }

// Record writes an event of type typ whose data is the resource as the API returns it, in the
// transaction of ctx (tenancy.Client), for the company ctx is pinned to. If the transaction
// rolls back, the event goes with it.
func (s *Service) Record(ctx context.Context, typ string, data any) error {
	if !Known(typ) {
		return fmt.Errorf("record event: unknown type %q (add it to events.Types)", typ)
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("record event %s: %w", typ, err)
	}
	_, err = tenancy.Client(ctx).Event.Create().SetType(typ).SetData(raw).SetActor(actor(ctx)).Save(ctx)
	if err != nil {
		return fmt.Errorf("record event %s: %w", typ, err)
	}
	return nil
}

func actor(ctx context.Context) schematype.Actor {
	if p, ok := tenancy.PrincipalFrom(ctx); ok {
		a := schematype.Actor{Type: "credential", CredentialID: p.KeyID.String(), KeyPrefix: p.KeyPrefix}
		if p.HasUser() {
			a.UserID = p.UserID.String()
		}
		return a
	}
	if tenancy.IsOperator(ctx) {
		return schematype.Actor{Type: "operator"}
	}
	return schematype.Actor{Type: "system"}
}
