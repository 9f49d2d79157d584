// Package idempotency is the one Idempotency-Key store. A POST the spec marks "Idem" mounts
// Middleware after authentication; the first request with a key runs, later ones with the
// same key get its response again, byte for byte, for 24 hours (Stripe's semantics with the
// IETF draft's status codes).
//
//   - Keys are scoped to company, credential, method and route.
//   - The key is reserved in its own short transaction before the handler runs, so a retry
//     while the first is still running sees the reservation and gets 409
//     idempotency_key_in_use.
//   - On success the response is stored in the request's own transaction, with the change: a
//     crash cannot leave a change without its record or the reverse. A reservation whose
//     request died is taken over after lockTTL.
//   - Errors after execution began (404, 409, 500 …) are stored too and replayed. Nothing is
//     stored when the request fails validation first (400, 415, 422) or on a passing database
//     failure that rolled it back (503 unavailable): the reservation is released and a retry
//     with the same key runs. After 503 commit_outcome_unknown a retry with the same key gets
//     the stored response when the COMMIT went through, and otherwise 409
//     idempotency_key_in_use until the reservation lapses (lockTTL), then runs.
//   - The same key with another body is 422 idempotency_key_reused.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	stdsql "database/sql"
	"errors"
	"fmt"
	"net/http"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/idempotencykey"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Header names.
const (
	Header         = "Idempotency-Key"
	ReplayedHeader = "Idempotent-Replayed"
)

const (
	ttl     = 24 * time.Hour
	lockTTL = 2 * time.Minute // longer than any request may run (server write timeout)
	maxKey  = 255
)

// storedHeaders are the response headers a replay repeats.
var storedHeaders = []string{fiber.HeaderContentType, fiber.HeaderLocation, fiber.HeaderETag, fiber.HeaderContentLanguage,
	fiber.HeaderCacheControl}

// Store keeps idempotency records in PostgreSQL, in the tenant's scope.
type Store struct {
	client *ent.Client // the pinned driver over app-role connections
	now    func() time.Time
	// OnReplay, when set, is called for each response replayed (metrics).
	OnReplay func()
}

// New returns the store.
func New(client *ent.Client, now func() time.Time) *Store { return &Store{client: client, now: now} }

type outcome int

const (
	reserved outcome = iota
	replay
	inUse
	reused
)

// Middleware makes the route idempotent for requests that carry Idempotency-Key.
func (s *Store) Middleware() fiber.Handler {
	return func(c *fiber.Ctx) error {
		key := c.Get(Header)
		if key == "" {
			return c.Next()
		}
		if len(key) > maxKey || !printable(key) {
			return errs.BadRequest("invalid_idempotency_key", "Idempotency-Key must be 1 to 255 printable ASCII characters")
		}
		ctx := c.UserContext()
		p, ok := tenancy.PrincipalFrom(ctx)
		if !ok {
			return errs.Unauthenticated("missing_credential", "no credential")
		}
		// The fingerprint covers the concrete path and query, not only the route pattern the key
		// is scoped to: one key sent to POST /x/1/action and then /x/2/action is a reuse (422),
		// never a replay of the first answer for the second resource.
		h := sha256.New()
		h.Write(c.Request().URI().PathOriginal())
		h.Write([]byte{'?'})
		h.Write(c.Request().URI().QueryString())
		h.Write([]byte("\n" + c.Get(fiber.HeaderContentType) + "\n"))
		if httpx.Streamed(c) {
			// A streamed upload (hundreds of MB) is not read before the handler: its
			// fingerprint is the length and the content type, whose multipart boundary a
			// client draws anew for each body.
			fmt.Fprintf(h, "length %d", c.Request().Header.ContentLength())
		} else {
			h.Write(c.Body())
		}
		sum := h.Sum(nil)
		scope := scope{company: p.CompanyID, credential: p.KeyID, method: c.Method(), route: c.Route().Path, key: key}
		rec, out, err := s.reserve(ctx, scope, sum)
		if err != nil {
			return err
		}
		switch out {
		case replay:
			if s.OnReplay != nil {
				s.OnReplay()
			}
			return writeReplay(c, rec)
		case inUse:
			return errs.Conflict("idempotency_key_in_use", "a request with this Idempotency-Key is still running; retry later")
		case reused:
			return &errs.E{Kind: errs.ErrInvalid, Code: "idempotency_key_reused",
				Detail: "this Idempotency-Key was used with another request body; use a new key"}
		}
		herr := c.Next()
		if herr == nil {
			// Same transaction as the change: both commit or neither. A route without a request
			// transaction (tenancy.SecretUnpinned) committed its change itself: the answer is
			// stored right after it, in a transaction of its own.
			if db, ok := tenancy.TxClient(ctx); ok {
				return s.complete(ctx, db, rec.ID, c)
			}
			return s.inTx(ctx, func(ctx context.Context, db *ent.Client) error { return s.complete(ctx, db, rec.ID, c) })
		}
		if failedBeforeExecution(herr) {
			return errors.Join(herr, s.release(ctx, rec.ID))
		}
		// Render the problem now to store it; the request transaction rolls back the change.
		if err := httpx.ErrorHandler(c, herr); err != nil {
			return errors.Join(herr, err)
		}
		if err := s.inTx(ctx, func(ctx context.Context, db *ent.Client) error {
			return s.complete(ctx, db, rec.ID, c)
		}); err != nil {
			return errors.Join(herr, err)
		}
		return herr
	}
}

type scope struct {
	company, credential uuid.UUID
	method, route, key  string
}

func (s *Store) inTx(ctx context.Context, f func(ctx context.Context, db *ent.Client) error) error {
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return fmt.Errorf("idempotency: %w", err)
	}
	if err := f(ctx, tx.Client()); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// reserve claims the key for this request or says why not, in its own committed transaction.
func (s *Store) reserve(ctx context.Context, sc scope, fp []byte) (*ent.IdempotencyKey, outcome, error) {
	var rec *ent.IdempotencyKey
	var out outcome
	err := s.inTx(ctx, func(ctx context.Context, db *ent.Client) error {
		now := s.now()
		id := uuid.Must(uuid.NewV7())
		err := db.IdempotencyKey.Create().SetID(id).SetCredentialID(sc.credential).SetKey(sc.key).
			SetMethod(sc.method).SetRoute(sc.route).SetFingerprint(fp).SetLockedUntil(now.Add(lockTTL)).
			SetCreatedAt(now).SetExpiresAt(now.Add(ttl)).
			OnConflict(sql.ConflictColumns(idempotencykey.FieldCompanyID, idempotencykey.FieldCredentialID,
				idempotencykey.FieldMethod, idempotencykey.FieldRoute, idempotencykey.FieldKey), sql.DoNothing()).
			Exec(ctx)
		if err != nil && !errors.Is(err, stdsql.ErrNoRows) {
			return fmt.Errorf("reserve idempotency key: %w", err)
		}
		rec, err = db.IdempotencyKey.Query().Where(idempotencykey.CredentialID(sc.credential),
			idempotencykey.Method(sc.method), idempotencykey.Route(sc.route), idempotencykey.Key(sc.key)).
			ForUpdate().Only(ctx)
		if err != nil {
			return fmt.Errorf("read idempotency key: %w", err)
		}
		switch {
		case rec.ID == id:
			out = reserved
		case rec.ExpiresAt.Before(now) || rec.Status == idempotencykey.StatusInProgress && rec.LockedUntil.Before(now):
			// expired, or its request died: start over
			rec, err = rec.Update().SetFingerprint(fp).SetStatus(idempotencykey.StatusInProgress).
				SetLockedUntil(now.Add(lockTTL)).SetExpiresAt(now.Add(ttl)).
				ClearResponseStatus().ClearResponseHeaders().ClearResponseBody().Save(ctx)
			out = reserved
		case !bytes.Equal(rec.Fingerprint, fp):
			out = reused
		case rec.Status == idempotencykey.StatusCompleted:
			out = replay
		default:
			out = inUse
		}
		return err
	})
	return rec, out, err
}

// complete stores the response c holds now.
func (s *Store) complete(ctx context.Context, db *ent.Client, id uuid.UUID, c *fiber.Ctx) error {
	h := map[string]string{}
	for _, k := range storedHeaders {
		if v := c.GetRespHeader(k); v != "" {
			h[k] = v
		}
	}
	body := bytes.Clone(c.Response().Body())
	err := db.IdempotencyKey.UpdateOneID(id).SetStatus(idempotencykey.StatusCompleted).
		SetResponseStatus(c.Response().StatusCode()).SetResponseHeaders(h).SetResponseBody(body).Exec(ctx)
	if err != nil {
		return fmt.Errorf("store idempotent response: %w", err)
	}
	return nil
}

// release forgets a reservation whose request failed before it executed.
func (s *Store) release(ctx context.Context, id uuid.UUID) error {
	return s.inTx(ctx, func(ctx context.Context, db *ent.Client) error {
		return db.IdempotencyKey.DeleteOneID(id).Exec(ctx)
	})
}

func writeReplay(c *fiber.Ctx, rec *ent.IdempotencyKey) error {
	for k, v := range rec.ResponseHeaders {
		c.Set(k, v)
	}
	c.Set(ReplayedHeader, "true")
	c.Status(rec.ResponseStatus)
	return c.Send(rec.ResponseBody)
}

// failedBeforeExecution: malformed or invalid requests, refused before the handler changed
// anything, and requests whose transaction a passing database failure rolled back (they run
// again, or the client retries after 503). Their keys stay free.
func failedBeforeExecution(err error) bool {
	if tenancy.Classify(err) == tenancy.Transient {
		return true
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		return fe.Code == http.StatusBadRequest || fe.Code == http.StatusUnsupportedMediaType ||
			fe.Code == http.StatusRequestEntityTooLarge
	}
	return errors.Is(err, errs.ErrInvalid) || errors.Is(err, errs.ErrBadRequest) || errors.Is(err, errs.ErrTooLarge)
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
