package operator

import (
	"context"
	"fmt"
	"net/mail"
	"net/url"
	"strings"

	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/app/platform/datakeys"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/companypoints"
	"github.com/brokerdesk/brokerdesk/ent/user"
)

// The e-mail area's operator use cases (issue 21): company mailboxes (the spec lists them but
// says nothing of how they are configured) and the points that pay for sending.

// NewMailbox is what `brokerdesk mailbox create` takes. Password comes from stdin or
// MAILBOX_PASSWORD, never a flag.
type NewMailbox struct {
	CompanyID uuid.UUID
	Email     string
	Label     string
	IMAPURL   string // imap://host:port (STARTTLS) or imaps://host:port
	SMTPURL   string // smtp://host:port (STARTTLS) or smtps://host:port
	Username  string
	Password  string
	OwnerID   *uuid.UUID // a personal mailbox of this user; nil with Shared
	Shared    bool
}

// Mailbox is a configured mailbox as the operator sees it (never the password).
type Mailbox struct {
	ID        uuid.UUID  `json:"id"`
	CompanyID uuid.UUID  `json:"companyId"`
	Email     string     `json:"email"`
	Label     string     `json:"label"`
	Shared    bool       `json:"shared"`
	OwnerID   *uuid.UUID `json:"ownerId"`
	IMAPURL   string     `json:"imapUrl"`
	SMTPURL   string     `json:"smtpUrl"`
	Username  string     `json:"username"`
	SyncState string     `json:"syncState"`
	SyncError string     `json:"syncError,omitempty"`
}

// MailboxOf is the operator's view of m.
func MailboxOf(m *ent.Mailbox) Mailbox {
	return Mailbox{ID: m.ID, CompanyID: m.CompanyID, Email: m.Email, Label: m.Label, Shared: m.Shared, OwnerID: m.OwnerID,
		IMAPURL: m.ImapURL, SMTPURL: m.SMTPURL, Username: m.Username, SyncState: string(m.SyncState), SyncError: m.SyncError}
}

// CreateMailbox checks in and stores the mailbox with its password sealed by keys.
func (s *Service) CreateMailbox(ctx context.Context, keys *datakeys.Keyring, in NewMailbox) (Mailbox, error) {
	var v errs.Invalid
	addr, err := mail.ParseAddress(in.Email)
	v.Check("email", err == nil && addr.Address == strings.TrimSpace(in.Email), "invalid_email", "must be an e-mail address")
	v.Check("imap", serverURL(in.IMAPURL, "imap", "imaps"), "invalid_url", "must be imap://host:port or imaps://host:port")
	v.Check("smtp", serverURL(in.SMTPURL, "smtp", "smtps"), "invalid_url", "must be smtp://host:port or smtps://host:port")
	v.Check("username", strings.TrimSpace(in.Username) != "", "required", "is required")
	v.Check("password", in.Password != "", "required", "is required (stdin or MAILBOX_PASSWORD)")
	v.Check("owner", in.Shared != (in.OwnerID != nil), "owner_or_shared", "give either --owner or --shared")
	if err := v.Err(); err != nil {
		return Mailbox{}, err
	}
	id := uuid.Must(uuid.NewV7())
	sealed, err := emails.SealPassword(keys, in.Password, id)
	if err != nil {
		return Mailbox{}, err
	}
	var out Mailbox
	err = s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		if in.OwnerID != nil {
			ok, err := db.User.Query().Where(user.ID(*in.OwnerID), user.CompanyID(in.CompanyID)).Exist(ctx)
			if err != nil {
				return err
			}
			if !ok {
				return errs.InvalidField("owner", "unknown_user", "is not a user of the company")
			}
		}
		m, err := db.Mailbox.Create().SetID(id).SetCompanyID(in.CompanyID).SetEmail(strings.ToLower(addr.Address)).
			SetLabel(strings.TrimSpace(in.Label)).SetShared(in.Shared).SetNillableOwnerID(in.OwnerID).
			SetImapURL(in.IMAPURL).SetSMTPURL(in.SMTPURL).SetUsername(strings.TrimSpace(in.Username)).
			SetPasswordSealed(sealed).Save(ctx)
		if ent.IsConstraintError(err) {
			return errs.InvalidField("email", "taken", "the company has a mailbox with this address")
		}
		if err != nil {
			return err
		}
		out = MailboxOf(m)
		return nil
	})
	if err != nil {
		return Mailbox{}, fmt.Errorf("create mailbox: %w", err)
	}
	return out, nil
}

func serverURL(s string, schemes ...string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Port() == "" {
		return false
	}
	for _, sc := range schemes {
		if u.Scheme == sc {
			return true
		}
	}
	return false
}

// GrantPoints adds n (> 0) points to the company's balance and writes the ledger line; the
// balance after is returned.
func (s *Service) GrantPoints(ctx context.Context, company uuid.UUID, n int64, reason string) (int64, error) {
	if n <= 0 {
		return 0, errs.InvalidField("points", "out_of_range", "must be a positive number")
	}
	if strings.TrimSpace(reason) == "" {
		reason = "grant"
	}
	var balance int64
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		err := db.CompanyPoints.Create().SetCompanyID(company).SetBalance(n).
			OnConflict(sql.ConflictColumns(companypoints.FieldCompanyID)).AddBalance(n).Exec(ctx)
		if err != nil {
			return err
		}
		if err := db.PointEntry.Create().SetCompanyID(company).SetDelta(n).SetReason(reason).Exec(ctx); err != nil {
			return err
		}
		p, err := db.CompanyPoints.Query().Where(companypoints.CompanyID(company)).Only(ctx)
		if err != nil {
			return err
		}
		balance = p.Balance
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("grant points: %w", err)
	}
	return balance, nil
}

// PointsBalance is the company's balance (0 before any grant).
func (s *Service) PointsBalance(ctx context.Context, company uuid.UUID) (int64, error) {
	var balance int64
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		p, err := db.CompanyPoints.Query().Where(companypoints.CompanyID(company)).Only(ctx)
		if ent.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		balance = p.Balance
		return nil
	})
	return balance, err
}
