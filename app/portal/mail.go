package portal

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// senderMailbox is the mailbox an invitation goes out from, chosen as signature requests choose
// theirs (emails.SenderMailbox): the acting user's personal mailbox, else the company's
// shared one; with neither 409 mailbox_required.
func senderMailbox(ctx context.Context) (*ent.Mailbox, error) {
	mb, err := emails.SenderMailbox(ctx)
	if err == nil && mb == nil {
		return nil, errs.Conflict("mailbox_required",
			"you have no personal mailbox and the company no shared one to send the invitation from")
	}
	return mb, err
}

// mailInvitation mails the invitation link (token secret) of a to its e-mail from mb, in the
// transaction of ctx (queued, delivered after the commit). Like a signing link it is free of
// points and not linked to the contact (a linked mail would put the link on the timeline), and
// Secrets keeps the link out of the copy the API shows, so nobody of the company can accept the
// invitation for the customer.
func (m *Module) mailInvitation(ctx context.Context, mb *ent.Mailbox, c *ent.Contact, a *ent.PortalAccess, secret string,
	expires time.Time) error {
	link := m.URL(c.CompanyID, "/invitation/"+secret)
	subject, text := invitationText(ctx, mb, c, link, expires)
	_, err := m.d.Emails.Send(ctx, emails.Outgoing{MailboxID: mb.ID,
		To: []schematype.MailAddress{{Email: a.Email, Name: contactName(c)}}, Subject: subject, Text: text,
		Free: true, Secrets: []string{link}})
	if err != nil {
		return fmt.Errorf("mail the portal invitation of contact %s: %w", c.ID, err)
	}
	return nil
}

// contactName is how the mail addresses the contact: its name, else the business's.
func contactName(c *ent.Contact) string {
	if n := strings.TrimSpace(c.FirstName + " " + c.LastName); n != "" {
		return n
	}
	return c.CompanyName
}

// invitationText is the German invitation: subject and plain text, naming the brokerage.
func invitationText(ctx context.Context, mb *ent.Mailbox, c *ent.Contact, link string, expires time.Time) (subject, text string) {
	sender, company := "", ""
	if p, ok := tenancy.PrincipalFrom(ctx); ok {
		sender = strings.TrimSpace(p.UserFirstName + " " + p.UserLastName)
		company = p.CompanyName
	}
	who := company
	if who == "" {
		who = mb.Label
	}
	subject = "Ihr Zugang zum Kundenportal"
	if who != "" {
		subject += " von " + who
	}
	var b strings.Builder
	if n := contactName(c); n != "" {
		fmt.Fprintf(&b, "Guten Tag %s,\n\n", n)
	} else {
		b.WriteString("Guten Tag,\n\n")
	}
	if who != "" {
		fmt.Fprintf(&b, "%s lädt Sie in das Kundenportal ein. ", who)
	} else {
		b.WriteString("wir laden Sie in unser Kundenportal ein. ")
	}
	b.WriteString("Dort sehen Sie Ihre Verträge und die für Sie freigegebenen Dokumente, unterschreiben " +
		"Dokumente und teilen uns Änderungen Ihrer Daten mit.\n\n")
	b.WriteString("Über diesen persönlichen Link legen Sie Ihr Passwort fest:\n\n")
	b.WriteString(link + "\n\n")
	fmt.Fprintf(&b, "Der Link gilt einmal und bis %s Uhr. Er ist nur für Sie bestimmt: Bitte geben Sie ihn nicht "+
		"weiter. Falls Sie keinen Zugang wünschen, können Sie diese E-Mail ignorieren.\n\n",
		expires.In(httpx.Berlin).Format("02.01.2006, 15:04"))
	b.WriteString("Mit freundlichen Grüßen\n")
	if sender != "" {
		b.WriteString(sender + "\n")
	}
	if company != "" && company != sender {
		b.WriteString(company + "\n")
	}
	return subject, b.String()
}
