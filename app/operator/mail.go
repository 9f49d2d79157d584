package operator

import (
	"context"
	"fmt"
	netmail "net/mail"
	"net/url"
	"strings"

	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/app/platform/datakeys"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/companypoints"
	"github.com/brokerdesk/brokerdesk/ent/mailbox"
	"github.com/brokerdesk/brokerdesk/ent/mailboxfolder"
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
	addr, err := netmail.ParseAddress(in.Email)
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
		// Named first: a missing company would otherwise fail the insert's foreign key, which
		// reads like the taken address below.
		if _, err := db.Company.Get(ctx, in.CompanyID); err != nil {
			return errs.FromEnt(err, "company %s", in.CompanyID)
		}
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

// ListMailboxes lists the mailboxes of a company (uuid.Nil: of every company), by company and
// address; never a password.
func (s *Service) ListMailboxes(ctx context.Context, company uuid.UUID) ([]Mailbox, error) {
	out := []Mailbox{}
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) error {
		q := db.Mailbox.Query().Order(ent.Asc(mailbox.FieldCompanyID), ent.Asc(mailbox.FieldEmail), ent.Asc(mailbox.FieldID))
		if company != uuid.Nil {
			if _, err := db.Company.Get(ctx, company); err != nil {
				return errs.FromEnt(err, "company %s", company)
			}
			q.Where(mailbox.CompanyID(company))
		}
		rows, err := q.All(ctx)
		for _, m := range rows {
			out = append(out, MailboxOf(m))
		}
		return err
	})
	return out, err
}

// findMailbox finds a mailbox by id.
func findMailbox(ctx context.Context, db *ent.Client, ref string) (*ent.Mailbox, error) {
	id, err := uuid.Parse(ref)
	if err != nil {
		return nil, errs.InvalidField("mailbox", "invalid_uuid", "name the mailbox by its id")
	}
	m, err := db.Mailbox.Get(ctx, id)
	return m, errs.FromEnt(err, "mailbox %s", id)
}

// MailboxCheck is what CheckMailbox found: the mailbox and each server's answer to a login
// (nil: it works).
type MailboxCheck struct {
	Mailbox Mailbox
	IMAP    error
	SMTP    error
}

// OK reports whether both servers took the login.
func (c MailboxCheck) OK() bool { return c.IMAP == nil && c.SMTP == nil }

// CheckMailbox logs in to the mailbox's IMAP and SMTP servers with its stored password and says
// what works. It changes nothing (a paused mailbox resumes by SetMailboxPassword), and it talks
// to the servers after the transaction that read the row: no transaction is held open across
// the network.
func (s *Service) CheckMailbox(ctx context.Context, keys *datakeys.Keyring, cfg mail.Config, ref string) (MailboxCheck, error) {
	var row *ent.Mailbox
	err := s.tx(ctx, func(ctx context.Context, db *ent.Client) (err error) {
		row, err = findMailbox(ctx, db, ref)
		return err
	})
	if err != nil {
		return MailboxCheck{}, fmt.Errorf("check mailbox: %w", err)
	}
	password, err := emails.OpenPassword(keys, row)
	if err != nil { // another DATA_KEYS than the one it was sealed with
		return MailboxCheck{}, fmt.Errorf("check mailbox: %w", err)
	}
	imapErr, smtpErr := mail.Check(ctx, cfg,
		mail.Server{URL: row.ImapURL, Username: row.Username, Password: password},
		mail.Server{URL: row.SMTPURL, Username: row.Username, Password: password})
	return MailboxCheck{Mailbox: MailboxOf(row), IMAP: imapErr, SMTP: smtpErr}, nil
}

// SetMailboxPassword seals a new password for the mailbox and makes it active again: a mailbox
// the sync paused because the server refused the old password resumes with the next sync.
func (s *Service) SetMailboxPassword(ctx context.Context, keys *datakeys.Keyring, ref, password string) (Mailbox, error) {
	if password == "" {
		return Mailbox{}, errs.InvalidField("password", "required", "is required (stdin or MAILBOX_PASSWORD)")
	}
	return onOne(ctx, s, ref, findMailbox, func(ctx context.Context, _ *ent.Client, m *ent.Mailbox) (*ent.Mailbox, error) {
		sealed, err := emails.SealPassword(keys, password, m.ID)
		if err != nil {
			return nil, err
		}
		return m.Update().SetPasswordSealed(sealed).SetSyncState(mailbox.SyncStateActive).SetSyncError("").Save(ctx)
	}, MailboxOf)
}

// MailboxChange is what `brokerdesk mailbox update` changes (nil: unchanged). The password has
// its own command, SetMailboxPassword; the address, owner and sharing do not change (a mailbox
// with another address is another mailbox: delete and create).
type MailboxChange struct {
	IMAPURL, SMTPURL, Username, Label *string
}

// UpdateMailbox changes the servers, user name or label of a mailbox: a mailbox whose provider
// moved keeps its threads. (dev points the demo mailbox at the loopback server's new ports on
// every run.)
func (s *Service) UpdateMailbox(ctx context.Context, ref string, ch MailboxChange) (Mailbox, error) {
	var v errs.Invalid
	v.Check("imap", ch.IMAPURL == nil || serverURL(*ch.IMAPURL, "imap", "imaps"), "invalid_url", "must be imap://host:port or imaps://host:port")
	v.Check("smtp", ch.SMTPURL == nil || serverURL(*ch.SMTPURL, "smtp", "smtps"), "invalid_url", "must be smtp://host:port or smtps://host:port")
	v.Check("username", ch.Username == nil || strings.TrimSpace(*ch.Username) != "", "required", "must not be empty")
	if err := v.Err(); err != nil {
		return Mailbox{}, err
	}
	return onOne(ctx, s, ref, findMailbox, func(ctx context.Context, db *ent.Client, m *ent.Mailbox) (*ent.Mailbox, error) {
		u := m.Update()
		if ch.IMAPURL != nil && *ch.IMAPURL != m.ImapURL {
			// Another server: its UIDs say nothing about the old one's (the loopback server of
			// dev starts every run with UIDVALIDITY 1 and UID 1 again), so the sync starts over
			// and the Sent folder is looked for anew. Messages stored from the old server stay.
			if _, err := db.MailboxFolder.Delete().Where(mailboxfolder.MailboxID(m.ID)).Exec(ctx); err != nil {
				return nil, err
			}
			u.SetImapURL(*ch.IMAPURL).SetSentFolder("")
		}
		if ch.SMTPURL != nil {
			u.SetSMTPURL(*ch.SMTPURL)
		}
		if ch.Username != nil {
			u.SetUsername(strings.TrimSpace(*ch.Username))
		}
		if ch.Label != nil {
			u.SetLabel(strings.TrimSpace(*ch.Label))
		}
		return u.Save(ctx)
	}, MailboxOf)
}

// DeleteMailbox removes the mailbox with its folders, threads, messages, attachments and links
// (the tenant foreign keys cascade); correspondence cases keep their text and lose the mailbox
// (SET NULL). The blobs of raw messages and attachments outlive the rows.
func (s *Service) DeleteMailbox(ctx context.Context, ref string) (Mailbox, error) {
	return onOne(ctx, s, ref, findMailbox, func(ctx context.Context, db *ent.Client, m *ent.Mailbox) (*ent.Mailbox, error) {
		return m, db.Mailbox.DeleteOne(m).Exec(ctx)
	}, MailboxOf)
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
