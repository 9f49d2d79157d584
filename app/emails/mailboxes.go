package emails

import (
	"context"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/mailbox"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Mailboxes are configured by the operator (`brokerdesk mailbox create|list|check|
// set-password|delete`, app/operator/mail.go); the API only lists them, for a client that must
// name one in POST /emails or POST /correspondence-cases/{caseId}/send.

// mountMailboxes registers GET /mailboxes. The spec gives it the scope correspondence:write
// (whoever may send a case needs to pick the mailbox); no licensed feature.
func (h *Handler) mountMailboxes(r fiber.Router) {
	r.Get("/mailboxes", policy.Require("correspondence:write"), h.listMailboxes)
}

// MailboxView is a mailbox as GET /mailboxes shows it: never its servers, user name or
// password (the operator's business), only what a client needs to choose one and to see
// whether it works.
type MailboxView struct {
	ID    uuid.UUID `json:"id"`
	Email string    `json:"email"`
	Label string    `json:"label"`
	// Shared: every user of the company sees and sends from it; else OwnerID's personal one.
	Shared  bool       `json:"shared"`
	OwnerID *uuid.UUID `json:"ownerId"`
	// SyncState is active, paused (the server refused the login: the operator must set a new
	// password) or failing (the last sync failed otherwise; retried).
	SyncState string     `json:"syncState"`
	SyncedAt  *time.Time `json:"syncedAt"`
}

// NewMailboxView is the view of m.
func NewMailboxView(m *ent.Mailbox) MailboxView {
	return MailboxView{ID: m.ID, Email: m.Email, Label: m.Label, Shared: m.Shared, OwnerID: m.OwnerID,
		SyncState: string(m.SyncState), SyncedAt: m.SyncedAt}
}

// ListMailboxes returns the mailboxes the caller may see, by address: shared ones, the
// caller's own and those of users who delegated to the caller (every one for a credential
// that sees the whole company). RLS (mailbox_visibility) and the ent rule
// (rule.FilterVisibleMailbox) both narrow the query; nothing here repeats them.
func (s *Service) ListMailboxes(ctx context.Context) ([]*ent.Mailbox, error) {
	rows, err := tenancy.Client(ctx).Mailbox.Query().
		Order(ent.Asc(mailbox.FieldEmail), ent.Asc(mailbox.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list mailboxes: %w", err)
	}
	return rows, nil
}

// listMailboxes handles GET /mailboxes: unpaged (a company has a handful), by address.
func (h *Handler) listMailboxes(c *fiber.Ctx) error {
	rows, err := h.svc.ListMailboxes(c.UserContext())
	if err != nil {
		return err
	}
	return httpx.Data(c, rows, NewMailboxView)
}

// SenderMailbox is the mailbox a mail the service writes on the caller's behalf goes out from
// (signing links, portal invitations and resets): the acting user's personal mailbox (the first
// by address), else the company's shared one; nil when there is neither. Mailbox reads are under
// the visibility of ctx, so a personal mailbox of a colleague is never chosen.
func SenderMailbox(ctx context.Context) (*ent.Mailbox, error) {
	db := tenancy.Client(ctx)
	if u := tenancy.ActingUser(ctx); u != nil {
		mb, err := db.Mailbox.Query().Where(mailbox.OwnerID(*u), mailbox.Shared(false)).
			Order(ent.Asc(mailbox.FieldEmail), ent.Asc(mailbox.FieldID)).First(ctx)
		if err == nil {
			return mb, nil
		}
		if !ent.IsNotFound(err) {
			return nil, fmt.Errorf("read personal mailbox: %w", err)
		}
	}
	mb, err := db.Mailbox.Query().Where(mailbox.Shared(true)).
		Order(ent.Asc(mailbox.FieldEmail), ent.Asc(mailbox.FieldID)).First(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read shared mailbox: %w", err)
	}
	return mb, nil
}
