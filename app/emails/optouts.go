package emails

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"entgo.io/ent/dialect/sql"
	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/emailoptout"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Opt-out sources (schema.EmailOptOutSources).
const (
	OptOutAPI         = "api"
	OptOutUnsubscribe = "unsubscribe"
)

// Bounds of the opt-out list.
const (
	maxOptOutEmail  = 320
	maxOptOutReason = 500
	maxConsentRef   = 200
)

// mountOptOuts registers GET, POST and DELETE /email-opt-outs (company-wide, scopes
// marketing:read/write, feature marketing).
func (h *Handler) mountOptOuts(r fiber.Router) {
	r.Get("/email-opt-outs", policy.Require("marketing:read"), h.listOptOuts)
	r.Post("/email-opt-outs", policy.Require("marketing:write"), h.createOptOut)
	r.Delete("/email-opt-outs/:email", policy.Require("marketing:write"), h.deleteOptOut)
}

// OptOutView is the EmailOptOut resource.
type OptOutView struct {
	ID        uuid.UUID `json:"id"`
	Email     string    `json:"email"`
	Reason    string    `json:"reason"`
	Source    string    `json:"source"`
	CreatedAt time.Time `json:"createdAt"`
}

// NewOptOutView is the EmailOptOut resource of o.
func NewOptOutView(o *ent.EmailOptOut) OptOutView {
	return OptOutView{ID: o.ID, Email: o.Email, Reason: o.Reason, Source: string(o.Source), CreatedAt: o.CreatedAt}
}

// optOutDeleted is the data of email_opt_out.deleted: the entry as it was and the renewed
// consent that allowed taking it off.
type optOutDeleted struct {
	OptOutView
	ConsentReference string `json:"consentReference"`
}

// OptOutInput is the body of POST /email-opt-outs.
type OptOutInput struct {
	Email  *string `json:"email"`
	Reason *string `json:"reason"`
}

// Validate checks the body: every bad field at once.
func (in OptOutInput) Validate() error {
	var v errs.Invalid
	v.Require("email", in.Email != nil && strings.TrimSpace(*in.Email) != "")
	if in.Email != nil && strings.TrimSpace(*in.Email) != "" {
		check.Len(&v, "email", in.Email, maxOptOutEmail)
		v.Check("email", check.ValidEmail(*in.Email), "invalid_email", "is not an e-mail address")
	}
	check.Len(&v, "reason", in.Reason, maxOptOutReason)
	return v.Err()
}

// normalAddress is how an address is kept on and looked up in the list: trimmed, lower case
// (the local part is case-sensitive by RFC 5321, but no provider treats it so, and an opt-out
// that misses "Max@" for "max@" would mail someone who said no).
func normalAddress(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// OptOutFilter narrows GET /email-opt-outs.
type OptOutFilter struct {
	Email *string
}

// optOutsNewestFirst orders the list.
var optOutsNewestFirst = paging.ByCreatedDesc(func(o *ent.EmailOptOut) (time.Time, uuid.UUID) { return o.CreatedAt, o.ID })

// ListOptOuts returns a page of the company's opt-outs, newest first.
func (s *Service) ListOptOuts(ctx context.Context, f OptOutFilter, page paging.Page) ([]*ent.EmailOptOut, error) {
	k, err := optOutsNewestFirst.Apply(page)
	if err != nil {
		return nil, err
	}
	q := tenancy.Client(ctx).EmailOptOut.Query()
	if f.Email != nil {
		q.Where(emailoptout.Email(normalAddress(*f.Email)))
	}
	rows, err := q.Where(k.Where).Order(k.Order).Limit(k.Limit).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list email opt-outs: %w", err)
	}
	return rows, nil
}

// OptedOut answers which of addrs (compared trimmed and in lower case) are on the company's
// opt-out list, each as given: the send path drops them from marketing mail.
func (s *Service) OptedOut(ctx context.Context, addrs []string) ([]string, error) {
	if len(addrs) == 0 {
		return nil, nil
	}
	norm := make([]string, len(addrs))
	for i, a := range addrs {
		norm[i] = normalAddress(a)
	}
	on, err := tenancy.Client(ctx).EmailOptOut.Query().Where(emailoptout.EmailIn(norm...)).
		Select(emailoptout.FieldEmail).Strings(ctx)
	if err != nil {
		return nil, fmt.Errorf("email opt-outs: %w", err)
	}
	var out []string
	for i, a := range addrs {
		for _, o := range on {
			if o == norm[i] {
				out = append(out, a)
				break
			}
		}
	}
	return out, nil
}

// AddOptOut puts email on the company's opt-out list (source api or unsubscribe) and records
// email_opt_out.created; created is false when it was on the list already, and then the entry
// is returned as it is (its reason and source unchanged, no event). Safe under concurrent
// calls for one address: the insert skips a conflict on (company, email) and the row is read
// after it. The caller checks email's shape.
func (s *Service) AddOptOut(ctx context.Context, email, reason, source string) (*ent.EmailOptOut, bool, error) {
	email = normalAddress(email)
	db := tenancy.Client(ctx)
	id := uuid.Must(uuid.NewV7())
	c := db.EmailOptOut.Create().SetID(id).SetEmail(email).SetReason(reason).SetSource(emailoptout.Source(source))
	if p, ok := tenancy.PrincipalFrom(ctx); ok && p.HasUser() {
		c.SetCreatorID(p.UserID)
	}
	// DO NOTHING on a conflict returns no row, which ent reports as sql.ErrNoRows.
	err := c.OnConflict(sql.ConflictColumns(emailoptout.FieldCompanyID, emailoptout.FieldEmail)).DoNothing().Exec(ctx)
	if err != nil && !errors.Is(err, stdsql.ErrNoRows) {
		return nil, false, fmt.Errorf("add email opt-out: %w", err)
	}
	o, err := db.EmailOptOut.Query().Where(emailoptout.Email(email)).Only(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("read email opt-out: %w", err)
	}
	if o.ID != id {
		return o, false, nil
	}
	if err := s.events.Record(ctx, "email_opt_out.created", NewOptOutView(o)); err != nil {
		return nil, false, err
	}
	return o, true, nil
}

// DeleteOptOut takes email off the list on the renewed consent named by consentReference and
// records email_opt_out.deleted carrying that reference (the proof of the consent stays in
// the event log after the entry is gone). 404 when the address is not on the list.
func (s *Service) DeleteOptOut(ctx context.Context, email, consentReference string) error {
	db := tenancy.Client(ctx)
	o, err := db.EmailOptOut.Query().Where(emailoptout.Email(normalAddress(email))).Only(ctx)
	if err != nil {
		return errs.FromEnt(err, "email opt-out %s", email)
	}
	// No row lock first: the app role may not UPDATE the list, and FOR UPDATE needs that
	// right. Of two concurrent deletes one removes the row; the other deletes nothing and
	// answers 404, so the event is recorded once.
	n, err := db.EmailOptOut.Delete().Where(emailoptout.ID(o.ID)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("delete email opt-out %s: %w", o.ID, err)
	}
	if n == 0 {
		return errs.NotFound("email opt-out %s", email)
	}
	return s.events.Record(ctx, "email_opt_out.deleted", optOutDeleted{OptOutView: NewOptOutView(o), ConsentReference: consentReference})
}

// listOptOuts handles GET /email-opt-outs: Paged, newest first; email filters exactly
// (case-insensitive).
func (h *Handler) listOptOuts(c *fiber.Ctx) error {
	return httpx.ServeList(c, h.pager, "email-opt-outs", parseOptOutFilter, h.svc.ListOptOuts, optOutsNewestFirst, NewOptOutView)
}

func parseOptOutFilter(c *fiber.Ctx, v *errs.Invalid) (f OptOutFilter, _ error) {
	if e := c.Query("email"); e != "" {
		n := normalAddress(e)
		f.Email = &n
	}
	return f, nil
}

// createOptOut handles POST /email-opt-outs: 201 with the new entry, or 200 with the entry as
// it is when the address is on the list already (the caller's wish holds either way, and a
// retry is harmless without an Idempotency-Key).
func (h *Handler) createOptOut(c *fiber.Ctx) error {
	var in OptOutInput
	if err := httpx.Decode(c, &in); err != nil {
		return err
	}
	o, created, err := h.svc.AddOptOut(c.UserContext(), *in.Email, ptr.Deref(in.Reason), OptOutAPI)
	if err != nil {
		return err
	}
	if created {
		c.Status(fiber.StatusCreated)
	}
	return c.JSON(NewOptOutView(o))
}

// deleteOptOut handles DELETE /email-opt-outs/{email}?consentReference=…: only with renewed
// consent, named by the caller's reference to it (422 without one), 404 when the address is
// not on the list, else 204.
func (h *Handler) deleteOptOut(c *fiber.Ctx) error {
	email, err := url.PathUnescape(c.Params("email"))
	if err != nil {
		return errs.BadRequest("invalid_path", "email is not a valid path segment")
	}
	ref := strings.TrimSpace(c.Query("consentReference"))
	var v errs.Invalid
	v.Require("consentReference", ref != "")
	check.Text(&v, "consentReference", ref)
	v.Check("consentReference", utf8.RuneCountInString(ref) <= maxConsentRef, "too_long",
		fmt.Sprintf("at most %d characters", maxConsentRef))
	if err := v.Err(); err != nil {
		return err
	}
	if err := h.svc.DeleteOptOut(c.UserContext(), email, ref); err != nil {
		return err
	}
	return httpx.NoContent(c)
}
