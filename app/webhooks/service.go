package webhooks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/eventcounter"
	"github.com/brokerdesk/brokerdesk/ent/webhookcursor"
	"github.com/brokerdesk/brokerdesk/ent/webhookdelivery"
	"github.com/brokerdesk/brokerdesk/ent/webhookendpoint"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// MaxEndpoints bounds a company's endpoints: every event is delivered once per endpoint.
const MaxEndpoints = 20

// LogRetention is how long the delivery log is kept and listed (spec: Limits).
const LogRetention = 30 * 24 * time.Hour

// maxConcurrentTests bounds test deliveries per process: each holds its request's transaction
// open for up to Timeout while it waits for the receiver.
const maxConcurrentTests = 4

// Service runs the endpoint use cases for the company pinned in ctx, in the request's
// transaction (tenancy.Client).
type Service struct{ m *Module }

func (s *Service) now() time.Time { return s.m.d.Now() }

// Get reads one endpoint; another company's is not found.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (*ent.WebhookEndpoint, error) {
	ep, err := tenancy.Client(ctx).WebhookEndpoint.Get(ctx, id)
	if err != nil {
		return nil, errs.FromEnt(err, "webhook endpoint %s", id)
	}
	return ep, nil
}

// Lock reads one endpoint and locks it to the end of the transaction (If-Match, rotation).
func (s *Service) Lock(ctx context.Context, id uuid.UUID) (*ent.WebhookEndpoint, error) {
	ep, err := tenancy.Client(ctx).WebhookEndpoint.Query().Where(webhookendpoint.ID(id)).ForUpdate().Only(ctx)
	if err != nil {
		return nil, errs.FromEnt(err, "webhook endpoint %s", id)
	}
	return ep, nil
}

// endpointsOldestFirst orders GET /webhook-endpoints.
var endpointsOldestFirst = paging.ByCreated(func(e *ent.WebhookEndpoint) (time.Time, uuid.UUID) { return e.CreatedAt, e.ID })

// List pages the company's endpoints, oldest first.
func (s *Service) List(ctx context.Context, _ struct{}, page paging.Page) ([]*ent.WebhookEndpoint, error) {
	return endpointsOldestFirst.Rows(page, "webhook endpoints", func(k paging.Query) ([]*ent.WebhookEndpoint, error) {
		return tenancy.Client(ctx).WebhookEndpoint.Query().Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	})
}

// checkTypes refuses event types the caller could never receive (its scopes, role, license):
// such a subscription would stay silent. "*" means every type the credential may receive.
func (s *Service) checkTypes(ctx context.Context, types []string) error {
	p, ok := tenancy.PrincipalFrom(ctx)
	if !ok {
		return errs.Unauthenticated("missing_credential", "no credential")
	}
	var v errs.Invalid
	for _, t := range types {
		if t != AllEvents && s.m.d.Authz.Check(p, events.ScopeOf(t)) != nil {
			v.Add("events", "event_type_forbidden", fmt.Sprintf("this credential may not receive %s (it needs %s)", t, events.ScopeOf(t)))
		}
	}
	return v.Err()
}

// lastSeq is the company's newest event sequence number (0 before its first event).
func lastSeq(ctx context.Context) (int64, error) {
	c, err := tenancy.Client(ctx).EventCounter.Query().Select(eventcounter.FieldLastSeq).Only(ctx)
	if ent.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return c.LastSeq, nil
}

// Registered is a new endpoint with its signing secret: the only time the secret is known
// outside the sealed column.
type Registered struct {
	*ent.WebhookEndpoint
	Secret string
}

// Create registers an endpoint for the caller's credential and returns it with its secret (the
// only time the secret is shown). It receives events committed from now on.
func (s *Service) Create(ctx context.Context, in Input) (Registered, error) {
	if err := in.validate(s.m.d.Guard); err != nil {
		return Registered{}, err
	}
	if err := s.checkTypes(ctx, in.Events); err != nil {
		return Registered{}, err
	}
	c := credentialOf(ctx)
	db := tenancy.Client(ctx)
	n, err := endpointCount(ctx)
	if err != nil {
		return Registered{}, err
	}
	if n >= MaxEndpoints {
		return Registered{}, errs.Conflict("endpoint_limit", "a company can register at most %d webhook endpoints", MaxEndpoints)
	}
	seq, err := lastSeq(ctx)
	if err != nil {
		return Registered{}, err
	}
	key, secret := newSecret()
	id := uuid.Must(uuid.NewV7())
	p, _ := tenancy.PrincipalFrom(ctx)
	ep, err := db.WebhookEndpoint.Create().SetID(id).SetURL(*in.URL).SetNillableDescription(in.Description).
		SetEventTypes(in.Events).SetEnabled(in.Enabled == nil || *in.Enabled).
		SetSecret(s.m.d.Sealer.Seal(p.CompanyID, id, key)).SetStartSeq(seq).
		SetNillableCredentialID(c.key).SetNillableOauthClientID(c.client).SetNillableOauthUserID(c.user).
		SetNillableCredentialUserID(c.actsFor).Save(ctx)
	if err != nil {
		return Registered{}, fmt.Errorf("create webhook endpoint: %w", err)
	}
	if err := db.WebhookCursor.Create().SetDispatchedSeq(seq).
		OnConflictColumns(webhookcursor.FieldCompanyID).DoNothing().Exec(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Registered{}, fmt.Errorf("create webhook cursor: %w", err)
	}
	return Registered{WebhookEndpoint: ep, Secret: secret}, nil
}

// endpointCount is the company's number of endpoints, for MaxEndpoints.
func endpointCount(ctx context.Context) (int, error) {
	var n int
	if err := tenancy.QueryRow(ctx, endpointCountQuery, nil, &n); err != nil {
		return 0, fmt.Errorf("count webhook endpoints: %w", err)
	}
	return n, nil
}

// credential is what an endpoint remembers of the caller's credential: the key, or the OAuth
// client and, for a user's grant, the user (a token itself lives an hour; the endpoint acts for
// the authorization behind it, see tenancy.OAuthCredentialPrincipal); and the user the
// credential acts for (nil for company-level ones), which the row-level security policy
// endpoint_owner reads. The credential owns the endpoint (rule.FilterOwnCredential).
type credential struct{ key, client, user, actsFor *uuid.UUID }

func credentialOf(ctx context.Context) credential {
	p, _ := tenancy.PrincipalFrom(ctx)
	var c credential
	if p.HasUser() {
		c.actsFor = &p.UserID
	}
	if p.Kind != tenancy.KindOAuth {
		c.key = &p.KeyID
		return c
	}
	c.client = &p.ClientID
	c.user = c.actsFor
	return c
}

// Update applies a patched Input to cur (locked). A new url binds the endpoint to the caller's
// credential: whoever points an endpoint somewhere decides with their own rights what it
// receives (else a key with webhooks:write alone could redirect a wider key's events), and owns
// it from then on (only an admin credential can change another's endpoint at all). Enabling
// a disabled endpoint starts it at the newest event (no backlog of the disabled time) and clears
// the server's reason. Nothing changed: no new version.
func (s *Service) Update(ctx context.Context, cur *ent.WebhookEndpoint, in Input) (*ent.WebhookEndpoint, error) {
	if err := in.validate(s.m.d.Guard); err != nil {
		return nil, err
	}
	if !slices.Equal(in.Events, cur.EventTypes) {
		if err := s.checkTypes(ctx, in.Events); err != nil {
			return nil, err
		}
	}
	enabled := in.Enabled == nil || *in.Enabled
	u := cur.Update()
	changed := false
	if *in.URL != cur.URL {
		u.SetURL(*in.URL)
		c := credentialOf(ctx)
		setOrClear(c.key, u.SetCredentialID, u.ClearCredentialID)
		setOrClear(c.client, u.SetOauthClientID, u.ClearOauthClientID)
		setOrClear(c.user, u.SetOauthUserID, u.ClearOauthUserID)
		setOrClear(c.actsFor, u.SetCredentialUserID, u.ClearCredentialUserID)
		changed = true
	}
	if !slices.Equal(in.Events, cur.EventTypes) {
		u.SetEventTypes(in.Events)
		changed = true
	}
	if !equalPtr(in.Description, cur.Description) {
		u.SetNillableDescription(in.Description)
		if in.Description == nil {
			u.ClearDescription()
		}
		changed = true
	}
	if enabled != cur.Enabled {
		u.SetEnabled(enabled).ClearDisabledReason().ClearFailingSince()
		if enabled {
			seq, err := lastSeq(ctx)
			if err != nil {
				return nil, err
			}
			u.SetStartSeq(seq)
		}
		changed = true
	}
	if !changed {
		return cur, nil
	}
	ep, err := u.Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("update webhook endpoint %s: %w", cur.ID, err)
	}
	return ep, nil
}

// setOrClear writes a nullable id column of an update: v, or NULL when v is nil.
func setOrClear[U any](v *uuid.UUID, set func(uuid.UUID) U, clear func() U) {
	if v != nil {
		set(*v)
	} else {
		clear()
	}
}

func equalPtr(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// Delete removes the endpoint and its delivery log; queued jobs find it gone and stop.
func (s *Service) Delete(ctx context.Context, ep *ent.WebhookEndpoint) error {
	if err := tenancy.Client(ctx).WebhookEndpoint.DeleteOne(ep).Exec(ctx); err != nil {
		return fmt.Errorf("delete webhook endpoint %s: %w", ep.ID, err)
	}
	return nil
}

// Rotation is the answer of a rotation: the new secret, and until when the one before it still
// signs.
type Rotation struct {
	Secret                  string
	PreviousSecretExpiresAt time.Time
}

// Rotate gives ep (locked) a new secret; the current one keeps signing for Overlap. A rotation
// during an overlap drops the older secret at once: at most two secrets sign.
func (s *Service) Rotate(ctx context.Context, ep *ent.WebhookEndpoint) (Rotation, error) {
	key, secret := newSecret()
	expires := s.now().Add(Overlap).UTC().Truncate(time.Microsecond)
	_, err := ep.Update().SetSecret(s.m.d.Sealer.Seal(ep.CompanyID, ep.ID, key)).SetPreviousSecret(ep.Secret).
		SetPreviousSecretExpiresAt(expires).Save(ctx)
	if err != nil {
		return Rotation{}, fmt.Errorf("rotate webhook secret %s: %w", ep.ID, err)
	}
	return Rotation{Secret: secret, PreviousSecretExpiresAt: expires}, nil
}

// Test sends a ping to ep now and logs it (one attempt, no retries). The ping is not an event of
// the feed; its id is new each time.
func (s *Service) Test(ctx context.Context, ep *ent.WebhookEndpoint) (*ent.WebhookDelivery, error) {
	select {
	case s.m.tests <- struct{}{}:
		defer func() { <-s.m.tests }()
	default:
		return nil, errBusyTests
	}
	keys, err := signingKeys(s.m.d.Sealer, ep, s.now())
	if err != nil {
		return nil, err
	}
	id := uuid.Must(uuid.NewV7())
	body, err := pingBody(id, ep.ID, s.now())
	if err != nil {
		return nil, err
	}
	res := s.m.sender.Send(ctx, ep.URL, id.String(), body, keys)
	status := webhookdelivery.StatusFailed
	if res.OK() {
		status = webhookdelivery.StatusSucceeded
	}
	a := DeliveryArgs{CompanyID: ep.CompanyID, EndpointID: ep.ID, EventID: id, EventType: "ping"}
	db := tenancy.Client(ctx)
	if err := logAttempt(ctx, db, a, 1, status, res, 0); err != nil {
		return nil, err
	}
	return db.WebhookDelivery.Query().Where(webhookdelivery.EndpointID(ep.ID), webhookdelivery.EventID(id)).Only(ctx)
}

// errBusyTests answers a test while maxConcurrentTests run in this process.
var errBusyTests = errs.RateLimited("too many test deliveries are running; try again in a second")

// DeliveryFilter names the endpoint of GET …/deliveries and narrows its log by status.
type DeliveryFilter struct {
	EndpointID uuid.UUID
	Status     *string
}

// newestFirst orders a delivery log.
var newestFirst = paging.ByCreatedDesc(func(d *ent.WebhookDelivery) (time.Time, uuid.UUID) { return d.CreatedAt, d.ID })

// Deliveries pages the delivery log of the endpoint of f (which must be visible), newest
// first, of the last LogRetention.
func (s *Service) Deliveries(ctx context.Context, f DeliveryFilter, page paging.Page) ([]*ent.WebhookDelivery, error) {
	if _, err := s.Get(ctx, f.EndpointID); err != nil {
		return nil, err
	}
	return newestFirst.Rows(page, "deliveries of webhook endpoint "+f.EndpointID.String(), func(k paging.Query) ([]*ent.WebhookDelivery, error) {
		return tenancy.Client(ctx).WebhookDelivery.Query().Where(webhookdelivery.EndpointID(f.EndpointID),
			webhookdelivery.CreatedAtGTE(s.now().Add(-LogRetention))).Where(paging.Enum(f.Status, webhookdelivery.StatusEQ)...).
			Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	})
}

// Retry queues one more attempt of the delivery id of ep (202): a pending log row and its job,
// inserted in one transaction (river's InsertTx), so neither exists without the other. The
// attempt fills the row. Retries are single attempts, as the automatic schedule is over.
func (s *Service) Retry(ctx context.Context, ep *ent.WebhookEndpoint, id uuid.UUID) (*ent.WebhookDelivery, error) {
	d, err := tenancy.Client(ctx).WebhookDelivery.Query().Where(webhookdelivery.ID(id), webhookdelivery.EndpointID(ep.ID)).Only(ctx)
	if err != nil {
		return nil, errs.FromEnt(err, "delivery %s", id)
	}
	if !ep.Enabled {
		return nil, errs.Conflict("endpoint_disabled", "the endpoint is disabled; enable it before retrying a delivery")
	}
	tx, err := tenancy.BeginPgx(tenancy.WithCompany(ctx, ep.CompanyID), s.m.d.Pool)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // no-op after commit
	now := s.now().UTC().Truncate(time.Microsecond)
	rowID := uuid.Must(uuid.NewV7())
	var attempt int
	if err := tx.QueryRow(ctx, queueRetry, rowID, ep.CompanyID, now, ep.ID, d.EventID, d.EventType).Scan(&attempt); err != nil {
		return nil, fmt.Errorf("queue webhook retry: %w", err)
	}
	args := DeliveryArgs{CompanyID: ep.CompanyID, EndpointID: ep.ID, EventID: d.EventID, EventType: d.EventType, DeliveryID: &rowID}
	if _, err := s.m.queue.InsertTx(ctx, tx, args, &river.InsertOpts{MaxAttempts: 1}); err != nil {
		return nil, fmt.Errorf("queue webhook retry: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	// The row as inserted, not read back: the request's transaction does not see the pgx one's.
	return &ent.WebhookDelivery{ID: rowID, CompanyID: ep.CompanyID, EndpointID: ep.ID, EventID: d.EventID,
		EventType: d.EventType, Attempt: attempt, Status: webhookdelivery.StatusPending, CreatedAt: now, UpdatedAt: now}, nil
}
