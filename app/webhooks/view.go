package webhooks

import (
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
)

// View is the WebhookEndpoint resource. The signing secret is never part of it: it is shown
// once, by create and rotate-secret.
type View struct {
	ID                      uuid.UUID  `json:"id"`
	URL                     string     `json:"url"`
	Description             *string    `json:"description"`
	Events                  []string   `json:"events"`
	Enabled                 bool       `json:"enabled"`
	DisabledReason          *string    `json:"disabledReason"`
	CredentialID            *uuid.UUID `json:"credentialId"`
	OAuthClientID           *uuid.UUID `json:"oauthClientId"`
	FailingSince            *time.Time `json:"failingSince"`
	PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt"`
	CreatedAt               time.Time  `json:"createdAt"`
	UpdatedAt               time.Time  `json:"updatedAt"`
}

// NewView is the WebhookEndpoint resource of e; now hides a previous secret that stopped signing.
func NewView(e *ent.WebhookEndpoint, now time.Time) View {
	v := View{ID: e.ID, URL: e.URL, Description: e.Description, Events: e.EventTypes, Enabled: e.Enabled,
		CredentialID: e.CredentialID, OAuthClientID: e.OauthClientID, FailingSince: utc(e.FailingSince),
		CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC()}
	if v.Events == nil {
		v.Events = []string{}
	}
	if e.DisabledReason != nil {
		r := string(*e.DisabledReason)
		v.DisabledReason = &r
	}
	if e.PreviousSecretExpiresAt != nil && e.PreviousSecretExpiresAt.After(now) {
		v.PreviousSecretExpiresAt = utc(e.PreviousSecretExpiresAt)
	}
	return v
}

// CreatedView is the answer of POST /webhook-endpoints: the endpoint and its secret.
type CreatedView struct {
	View
	Secret string `json:"secret"`
}

// RotatedView is the answer of rotate-secret.
type RotatedView struct {
	Secret                  string    `json:"secret"`
	PreviousSecretExpiresAt time.Time `json:"previousSecretExpiresAt"`
}

// DeliveryView is the WebhookDelivery resource: one attempt to deliver one event.
type DeliveryView struct {
	ID                uuid.UUID  `json:"id"`
	WebhookEndpointID uuid.UUID  `json:"webhookEndpointId"`
	EventID           uuid.UUID  `json:"eventId"`
	EventType         string     `json:"eventType"`
	Attempt           int        `json:"attempt"`
	Status            string     `json:"status"`
	HTTPStatus        *int       `json:"httpStatus"`
	ResponseBody      *string    `json:"responseBody"`
	DurationMs        *int       `json:"durationMs"`
	Error             *string    `json:"error"`
	AttemptedAt       *time.Time `json:"attemptedAt"`
	NextAttemptAt     *time.Time `json:"nextAttemptAt"`
	CreatedAt         time.Time  `json:"createdAt"`
	UpdatedAt         time.Time  `json:"updatedAt"`
}

// NewDeliveryView is the WebhookDelivery resource of d.
func NewDeliveryView(d *ent.WebhookDelivery) DeliveryView {
	return DeliveryView{ID: d.ID, WebhookEndpointID: d.EndpointID, EventID: d.EventID, EventType: d.EventType,
		Attempt: d.Attempt, Status: string(d.Status), HTTPStatus: d.HTTPStatus, ResponseBody: d.ResponseBody,
		DurationMs: d.DurationMs, Error: d.Error, AttemptedAt: utc(d.AttemptedAt), NextAttemptAt: utc(d.NextAttemptAt),
		CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC()}
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
