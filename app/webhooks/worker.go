package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/event"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/ent/webhookdelivery"
	"github.com/brokerdesk/brokerdesk/ent/webhookendpoint"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Schedule is the wait after each failed attempt before the next: 14 attempts over about three
// days (3 d 3.6 h without jitter), each wait ±20% at random so that receivers coming back are
// not hit by every retry at once.
var Schedule = []time.Duration{
	5 * time.Second, time.Minute, 5 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour,
	4 * time.Hour, 8 * time.Hour, 12 * time.Hour, 12 * time.Hour, 12 * time.Hour, 12 * time.Hour, 12 * time.Hour,
}

// DisableAfter is how long an endpoint may fail every attempt before it is disabled.
const DisableAfter = 5 * 24 * time.Hour

// jitter spreads d by ±20%.
func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// DeliveryArgs is one job: deliver one event to one endpoint. Ids only: river's tables are
// outside tenant row-level security, so no company data goes into them.
type DeliveryArgs struct {
	CompanyID  uuid.UUID `json:"companyId"`
	EndpointID uuid.UUID `json:"endpointId"`
	EventID    uuid.UUID `json:"eventId"`
	EventType  string    `json:"eventType"`
	// DeliveryID is the pending delivery log row a manual retry created, which the attempt fills.
	DeliveryID *uuid.UUID `json:"deliveryId,omitempty"`
}

// Kind names the job.
func (DeliveryArgs) Kind() string { return "webhook_delivery" }

// InsertOpts put deliveries on their own queue.
func (DeliveryArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.QueueWebhooks}
}

// DeliveryWorker makes one delivery attempt per run. The retry schedule is its own (Schedule):
// a failed attempt logs a pending row with next_attempt_at and snoozes the job until then, so
// river's attempts count only runs that broke (a database error, a process killed), which
// river retries by NextRetry.
type DeliveryWorker struct {
	river.WorkerDefaults[DeliveryArgs]
	m *Module
}

// Timeout bounds a run: the attempt (Timeout) and its transactions.
func (w *DeliveryWorker) Timeout(*river.Job[DeliveryArgs]) time.Duration { return 25 * time.Second }

// NextRetry is for runs that returned an error (not failed attempts): soon, growing.
func (w *DeliveryWorker) NextRetry(job *river.Job[DeliveryArgs]) time.Time {
	i := min(job.Attempt, len(Schedule)) - 1
	return time.Now().Add(jitter(Schedule[max(i, 0)]))
}

// errStop ends a job without an attempt: the endpoint is gone or disabled, its credential
// inactive (cancel: nothing more for this endpoint), or the event is not for this credential or
// no longer kept (skip).
type errStop struct {
	reason  string
	cancel  bool
	disable bool // the endpoint's credential is inactive: disable it (credential_inactive)
}

func (e errStop) Error() string { return e.reason }

// tx runs f in a transaction of the job pool pinned as ctx says (tenancy), with the client in
// ctx so that area code (events.Visible, events.Record) works as in a request.
func (w *DeliveryWorker) tx(ctx context.Context, f func(ctx context.Context, tx *ent.Tx) error) error {
	return withTx(ctx, w.m.d.DB, f)
}

func withTx(ctx context.Context, db *ent.Client, f func(ctx context.Context, tx *ent.Tx) error) error {
	tx, err := db.Tx(ctx)
	if err != nil {
		return err
	}
	if err := f(tenancy.WithClient(ctx, tx.Client()), tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Work makes the attempt.
func (w *DeliveryWorker) Work(ctx context.Context, job *river.Job[DeliveryArgs]) error {
	a := job.Args
	cctx := tenancy.WithCompany(ctx, a.CompanyID)
	ep, keys, body, err := w.prepare(ctx, a)
	var stop errStop
	if errors.As(err, &stop) {
		if err := w.tx(cctx, func(ctx context.Context, tx *ent.Tx) error {
			if stop.disable {
				if err := disable(ctx, w.m, tx.Client(), a.EndpointID, webhookendpoint.DisabledReasonCredentialInactive); err != nil {
					return err
				}
			}
			return abandon(ctx, tx, a, stop.reason)
		}); err != nil {
			return err
		}
		if stop.cancel {
			return river.JobCancel(stop)
		}
		return nil // not for this credential (scope, visibility) or no longer kept: nothing to send
	}
	if err != nil {
		return err
	}
	res := w.m.sender.Send(ctx, ep.URL, a.EventID.String(), body, keys)
	if ctx.Err() != nil {
		return ctx.Err() // shutting down or out of time: no verdict on the receiver; river retries
	}
	var snooze time.Duration
	err = w.tx(cctx, func(ctx context.Context, tx *ent.Tx) error {
		d, err := record(ctx, w.m, tx.Client(), ep, a, res)
		snooze = d
		return err
	})
	switch {
	case err != nil:
		return err // the attempt is not logged; river runs it again (at least once)
	case res.OK():
		return nil
	case snooze > 0:
		return river.JobSnooze(snooze)
	default:
		return river.JobCancel(fmt.Errorf("delivery failed for good: %s", res.Err))
	}
}

// prepare loads the endpoint, the credential it delivers as, its signing keys and the event as
// that credential may read it. A company-level credential's transaction is pinned exactly like
// the company's, so one transaction does it all; a user-bound credential's event is read in a
// second transaction pinned as that user (tenancy.WithPrincipal), which applies its visibility.
func (w *DeliveryWorker) prepare(ctx context.Context, a DeliveryArgs) (*ent.WebhookEndpoint, [][]byte, []byte, error) {
	var ep *ent.WebhookEndpoint
	var p *tenancy.Principal
	var body []byte
	err := w.tx(tenancy.WithCompany(ctx, a.CompanyID), func(ctx context.Context, tx *ent.Tx) error {
		var err error
		ep, err = tx.WebhookEndpoint.Get(ctx, a.EndpointID)
		switch {
		case ent.IsNotFound(err):
			return errStop{reason: "endpoint deleted", cancel: true}
		case err != nil:
			return err
		case !ep.Enabled:
			return errStop{reason: "endpoint disabled", cancel: true}
		}
		switch {
		case ep.CredentialID != nil:
			p, err = tenancy.CredentialPrincipal(ctx, tx, *ep.CredentialID)
		case ep.OauthClientID != nil:
			p, err = tenancy.OAuthCredentialPrincipal(ctx, tx, *ep.OauthClientID, ep.OauthUserID)
		default:
			err = tenancy.ErrCredentialInactive // the key or the client was deleted
		}
		if errors.Is(err, tenancy.ErrCredentialInactive) {
			return errStop{reason: "the endpoint's credential is inactive (key deactivated or deleted, user inactive, " +
				"OAuth grant revoked or expired, or client disabled): endpoint disabled", cancel: true, disable: true}
		}
		if err != nil {
			return err
		}
		asCredential(w.m.d.Authz, p)
		if p.HasUser() {
			return nil
		}
		body, err = w.event(tenancy.WithPrincipal(ctx, p), a)
		return err
	})
	if err == nil && p.HasUser() {
		err = w.tx(tenancy.WithPrincipal(ctx, p), func(ctx context.Context, _ *ent.Tx) error {
			var err error
			body, err = w.event(ctx, a)
			return err
		})
	}
	if err != nil {
		return nil, nil, nil, err
	}
	keys, err := signingKeys(w.m.d.Sealer, ep, w.m.d.Now())
	if err != nil {
		return nil, nil, nil, errStop{reason: err.Error(), cancel: true}
	}
	return ep, keys, body, nil
}

// asCredential completes a credential's Principal with what a request derives from the user's
// role besides the credential query, so that the transaction the worker pins as p filters
// exactly as the credential's requests are filtered (its visibility: all without a user, the
// role's otherwise). This is the one place to wire it.
func asCredential(authz *policy.Enforcer, p *tenancy.Principal) {
	authz.VisibilityOf(p)
}

// signingKeys opens the endpoint's current secret and, during the overlap, the previous one.
func signingKeys(s *Sealer, ep *ent.WebhookEndpoint, now time.Time) ([][]byte, error) {
	cur, err := s.Open(ep.CompanyID, ep.ID, ep.Secret)
	if err != nil {
		return nil, err
	}
	keys := [][]byte{cur}
	if ep.PreviousSecret != nil && ep.PreviousSecretExpiresAt != nil && now.Before(*ep.PreviousSecretExpiresAt) {
		if prev, err := s.Open(ep.CompanyID, ep.ID, *ep.PreviousSecret); err == nil {
			keys = append(keys, prev)
		}
	}
	return keys, nil
}

// event reads the event in the transaction of ctx, pinned as the endpoint's credential, through
// events.Visible (the one decision /events makes too), and returns the envelope GET /events
// shows.
func (w *DeliveryWorker) event(ctx context.Context, a DeliveryArgs) ([]byte, error) {
	if a.EventType == "ping" {
		return pingBody(a.EventID, a.EndpointID, w.m.d.Now())
	}
	q, err := events.Visible(ctx, w.m.d.Authz, nil)
	if err != nil {
		return nil, err
	}
	e, err := q.Where(event.ID(a.EventID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errStop{reason: "the event is not visible to the endpoint's credential, or no longer kept"}
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(events.NewView(e))
}

// pingBody is the envelope of a ping: not stored in the feed, the same shape.
func pingBody(id, endpoint uuid.UUID, now time.Time) ([]byte, error) {
	return json.Marshal(events.View{ID: id, Type: "ping", OccurredAt: now.UTC(),
		Data:  json.RawMessage(fmt.Sprintf(`{"webhookEndpointId":%q}`, endpoint)),
		Actor: schematype.Actor{Type: "system"}})
}

// abandon closes the delivery's open log rows (pending) as failed with reason, when a job ends
// without an attempt.
func abandon(ctx context.Context, tx *ent.Tx, a DeliveryArgs, reason string) error {
	_, err := tx.WebhookDelivery.Update().Where(webhookdelivery.EndpointID(a.EndpointID),
		webhookdelivery.EventID(a.EventID), webhookdelivery.StatusEQ(webhookdelivery.StatusPending)).
		SetStatus(webhookdelivery.StatusFailed).SetError(reason).ClearNextAttemptAt().Save(ctx)
	return err
}

// record logs one attempt and updates the endpoint's health: a success ends a failing streak;
// 410 Gone disables the endpoint at once; failing for DisableAfter disables it. It returns how
// long to wait before the next automatic attempt, 0 for none.
func record(ctx context.Context, m *Module, tx *ent.Client, ep *ent.WebhookEndpoint, a DeliveryArgs, res Result) (time.Duration, error) {
	now := m.d.Now()
	attempt := 0
	if a.DeliveryID != nil { // a manual retry fills the row it created
		d, err := tx.WebhookDelivery.Get(ctx, *a.DeliveryID)
		switch {
		case err == nil:
			attempt = d.Attempt
		case !ent.IsNotFound(err):
			return 0, err
		}
	}
	if attempt == 0 {
		n, err := lastAttempt(ctx, tx, a.EndpointID, a.EventID)
		if err != nil {
			return 0, err
		}
		attempt = n + 1
	}
	if attempt > 1 { // earlier rows of this delivery still pending are answered by this attempt
		open := tx.WebhookDelivery.Update().Where(webhookdelivery.EndpointID(a.EndpointID),
			webhookdelivery.EventID(a.EventID), webhookdelivery.StatusEQ(webhookdelivery.StatusPending))
		if a.DeliveryID != nil {
			open.Where(webhookdelivery.IDNEQ(*a.DeliveryID))
		}
		if _, err := open.SetStatus(webhookdelivery.StatusFailed).ClearNextAttemptAt().Save(ctx); err != nil {
			return 0, err
		}
	}
	var wait time.Duration
	status := webhookdelivery.StatusFailed
	switch {
	case res.OK():
		status = webhookdelivery.StatusSucceeded
	case a.DeliveryID == nil && !res.Gone() && attempt <= len(m.d.Schedule):
		wait = jitter(m.d.Schedule[attempt-1])
		status = webhookdelivery.StatusPending
	}
	if err := logAttempt(ctx, tx, a, attempt, status, res, wait); err != nil {
		return 0, err
	}
	if res.OK() && ep.FailingSince == nil {
		return 0, nil // healthy and staying so; a streak begun since ep was read ends at the next success
	}
	return wait, health(ctx, m, tx, ep.ID, res, now)
}

// lastAttempt is the highest attempt number logged for (endpoint, event), 0 for none.
func lastAttempt(ctx context.Context, tx *ent.Client, endpoint, ev uuid.UUID) (int, error) {
	var rows []struct {
		Max *int `json:"max"`
	}
	if err := tx.WebhookDelivery.Query().Where(webhookdelivery.EndpointID(endpoint), webhookdelivery.EventID(ev)).
		Aggregate(ent.Max(webhookdelivery.FieldAttempt)).Scan(ctx, &rows); err != nil {
		return 0, err
	}
	if len(rows) == 1 && rows[0].Max != nil {
		return *rows[0].Max, nil
	}
	return 0, nil
}

// logAttempt writes the delivery log row of an attempt (or fills a manual retry's pending row).
func logAttempt(ctx context.Context, tx *ent.Client, a DeliveryArgs, attempt int, status webhookdelivery.Status, res Result, wait time.Duration) error {
	ms := int(res.Duration.Milliseconds())
	var httpStatus *int
	if res.HTTPStatus != 0 {
		httpStatus = &res.HTTPStatus
	}
	var next *time.Time
	if wait > 0 {
		t := res.At.Add(wait)
		next = &t
	}
	var body, reason *string
	if res.HTTPStatus != 0 {
		body = &res.Body
	}
	if res.Err != "" {
		reason = &res.Err
	}
	if a.DeliveryID != nil {
		n, err := tx.WebhookDelivery.Update().Where(webhookdelivery.ID(*a.DeliveryID)).SetStatus(status).
			SetNillableHTTPStatus(httpStatus).SetNillableResponseBody(body).SetDurationMs(ms).SetNillableError(reason).
			SetAttemptedAt(res.At).SetNillableNextAttemptAt(next).Save(ctx)
		if err != nil || n == 1 {
			return err
		}
	}
	return tx.WebhookDelivery.Create().SetEndpointID(a.EndpointID).SetEventID(a.EventID).SetEventType(a.EventType).
		SetAttempt(attempt).SetStatus(status).SetNillableHTTPStatus(httpStatus).SetNillableResponseBody(body).
		SetDurationMs(ms).SetNillableError(reason).SetAttemptedAt(res.At).SetNillableNextAttemptAt(next).Exec(ctx)
}

// health keeps the endpoint's failing streak and disables it on 410 Gone or after DisableAfter
// of failures, recording webhook_endpoint.disabled (actor system) once. Conditional updates:
// concurrent attempts to one endpoint neither lose nor double a change.
func health(ctx context.Context, m *Module, tx *ent.Client, id uuid.UUID, res Result, now time.Time) error {
	if res.OK() {
		_, err := tx.WebhookEndpoint.Update().Where(webhookendpoint.ID(id), webhookendpoint.FailingSinceNotNil()).
			ClearFailingSince().Save(ctx)
		return err
	}
	if _, err := tx.WebhookEndpoint.Update().Where(webhookendpoint.ID(id), webhookendpoint.FailingSinceIsNil()).
		SetFailingSince(now).Save(ctx); err != nil {
		return err
	}
	reason := webhookendpoint.DisabledReasonEndpointGone
	if !res.Gone() {
		reason = webhookendpoint.DisabledReasonFailing
		n, err := tx.WebhookEndpoint.Query().Where(webhookendpoint.ID(id),
			webhookendpoint.FailingSinceLTE(now.Add(-DisableAfter))).Count(ctx)
		if err != nil || n == 0 {
			return err
		}
	}
	return disable(ctx, m, tx, id, reason)
}

// disable turns an enabled endpoint off for reason and records webhook_endpoint.disabled
// (actor system), once: a conditional update, so concurrent jobs do not record it twice. The
// event carries the endpoint's URL and is exactly as visible as the endpoint (issue 20 §5):
// owner_id is the user its credential acts for, and rule.FilterOwnCredentialEvents and the
// policy event_endpoint_owner narrow webhook_endpoint.* events as the endpoint is narrowed.
// Only work pinned to no user records it (the seq trigger must see the event it numbers).
func disable(ctx context.Context, m *Module, tx *ent.Client, id uuid.UUID, reason webhookendpoint.DisabledReason) error {
	n, err := tx.WebhookEndpoint.Update().Where(webhookendpoint.ID(id), webhookendpoint.Enabled(true)).
		SetEnabled(false).SetDisabledReason(reason).Save(ctx)
	if err != nil || n == 0 {
		return err
	}
	ep, err := tx.WebhookEndpoint.Get(ctx, id)
	if err != nil {
		return err
	}
	return m.d.Events.RecordAbout(ctx, "webhook_endpoint.disabled", NewView(ep, m.d.Now()),
		events.About{OwnerID: ep.CredentialUserID})
}
