package portal

import (
	"context"
	"fmt"
	"time"

	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/portalaccess"
	"github.com/brokerdesk/brokerdesk/ent/portaltoken"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// resetInterval: a reset link is mailed to an account at most this often, whoever asks from
// wherever (the per-sender throttle does not stop a mail bomb from many addresses).
const resetInterval = time.Minute

// mailReset mails a password reset link to the active access of email in the company
// transaction of ctx, if there is one; nothing otherwise (the page says the same either way).
// It mails from the company's shared mailbox: a reset is the brokerage writing, not one
// adviser. Without a shared mailbox the link cannot be mailed: it logs that and mails nothing.
func (m *Module) mailReset(ctx context.Context, pc *portalCompany, email string) error {
	db := tenancy.Client(ctx)
	acc, err := db.PortalAccess.Query().Where(portalaccess.Email(email), portalaccess.StatusEQ(portalaccess.StatusActive)).
		Only(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("portal reset: read access: %w", err)
	}
	now := m.d.Now()
	recent, err := db.PortalToken.Query().Where(portaltoken.AccessID(acc.ID),
		portaltoken.PurposeEQ(portaltoken.PurposePasswordReset), portaltoken.CreatedAtGT(now.Add(-resetInterval))).Exist(ctx)
	if err != nil {
		return fmt.Errorf("portal reset: recent links of %s: %w", acc.ID, err)
	}
	if recent {
		return nil
	}
	// No user acts here: the company's shared mailbox.
	mb, err := emails.SenderMailbox(ctx)
	if err == nil && mb == nil {
		m.d.Log.Warn().Str("company_id", pc.ID.String()).Str("portal_access_id", acc.ID.String()).
			Msg("portal password reset not mailed: the company has no shared mailbox")
		return nil
	}
	if err != nil {
		return fmt.Errorf("portal reset: %w", err)
	}
	secret, hash, err := newSecret()
	if err != nil {
		return err
	}
	if _, err := db.PortalToken.Create().SetAccessID(acc.ID).SetContactID(acc.ContactID).
		SetPurpose(portaltoken.PurposePasswordReset).SetTokenHash(hash).SetExpiresAt(now.Add(ResetTTL)).
		SetCreatedAt(now).Save(ctx); err != nil {
		return fmt.Errorf("portal reset: store link of %s: %w", acc.ID, err)
	}
	link := m.URL(pc.ID, "/reset/"+secret)
	// Free: a reset is no mailing of the broker's. Secrets: the copy the API shows has the link
	// blanked, so nobody at the brokerage can set the customer's password. No ContactID: the
	// mail is no correspondence for the timeline.
	_, err = m.d.Emails.Send(ctx, emails.Outgoing{MailboxID: mb.ID,
		To: []schematype.MailAddress{{Email: acc.Email}}, Subject: ResetSubject,
		Text: "Guten Tag,\n\n" +
			"Sie haben für das Kundenportal von " + pc.Name + " ein neues Passwort angefordert. " +
			"Über diesen Link legen Sie es fest:\n\n" + link + "\n\n" +
			"Der Link gilt eine Stunde und nur einmal. Wenn Sie kein neues Passwort angefordert haben, " +
			"ignorieren Sie diese E-Mail: Ihr Passwort bleibt unverändert.\n\n" +
			"Mit freundlichen Grüßen\n" + pc.Name + "\n",
		Free: true, Secrets: []string{link}})
	if err != nil {
		return fmt.Errorf("portal reset: mail link of %s: %w", acc.ID, err)
	}
	return nil
}

// ResetSubject is the subject of the password reset mail.
const ResetSubject = "Neues Passwort für Ihr Kundenportal"
