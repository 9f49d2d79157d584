package signatures

import (
	"context"
	"fmt"
	"strings"

	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// mailLinks mails each of signers their personal link (the built-in provider's Invite) from the
// request's mailbox, and sets their notified_at (reminder false) or reminded_at. The mails go
// through the e-mail area in the transaction of ctx (queued, delivered after the commit), free
// of points, and are not linked to the contact: a linked mail would put the link on the
// timeline. Secrets has the link left out of the copy the API shows ("[entfernt]"), so nobody
// of the company can open it there and sign for the customer.
//
// The request's mailbox is used when the caller may send from it; otherwise (a personal
// mailbox of the colleague who created the request, or one deleted since) the caller's own
// default, as create chooses it; with none a reminder is 409 mailbox_required.
func (m *Module) mailLinks(ctx context.Context, r *ent.SignatureRequest, signers []*ent.SignatureSigner, reminder bool) error {
	company, ok := tenancy.CompanyID(ctx)
	if !ok {
		return tenancy.ErrNoCompany
	}
	mb, err := resolveMailbox(ctx, r.MailboxID)
	if err != nil {
		return err
	}
	if mb == nil && r.MailboxID != nil {
		if mb, err = resolveMailbox(ctx, nil); err != nil {
			return err
		}
	}
	if mb == nil {
		return errs.Conflict("mailbox_required",
			"signature request %s has no mailbox you may send from, and you have no personal mailbox and the company no shared one", r.ID)
	}
	now := m.d.Now()
	db := tenancy.Client(ctx)
	for _, sg := range signers {
		link := m.linkURL(company, sg.ID)
		subject, text := invitation(ctx, r, sg, mb, link, reminder)
		_, err := m.d.Emails.Send(ctx, emails.Outgoing{MailboxID: mb.ID,
			To: []schematype.MailAddress{{Email: sg.Email, Name: sg.Name}}, Subject: subject, Text: text,
			Free: true, Secrets: []string{link}})
		if err != nil {
			return fmt.Errorf("mail the link of signer %d: %w", sg.Position, err)
		}
		upd := db.SignatureSigner.UpdateOne(sg)
		if reminder {
			upd.SetRemindedAt(now)
		} else {
			upd.SetNotifiedAt(now)
		}
		if _, err := upd.Save(ctx); err != nil {
			return fmt.Errorf("mark signer %s mailed: %w", sg.ID, err)
		}
	}
	return nil
}

// invitation is the German e-mail of a signer's link: subject and plain text.
func invitation(ctx context.Context, r *ent.SignatureRequest, sg *ent.SignatureSigner, mb *ent.Mailbox, link string,
	reminder bool) (subject, text string) {
	subject = "Bitte unterschreiben: " + r.Title
	if reminder {
		subject = "Erinnerung: " + subject
	}
	sender, company := from(ctx, mb)
	var b strings.Builder
	fmt.Fprintf(&b, "Guten Tag %s,\n\n", sg.Name)
	if reminder {
		b.WriteString("wir möchten Sie freundlich daran erinnern, dass noch Ihre Unterschrift fehlt.\n\n")
	}
	who := company
	if who == "" {
		who = sender
	}
	if who != "" {
		fmt.Fprintf(&b, "%s bittet Sie, das folgende Dokument elektronisch zu unterschreiben:\n\n", who)
	} else {
		b.WriteString("bitte unterschreiben Sie das folgende Dokument elektronisch:\n\n")
	}
	fmt.Fprintf(&b, "    %s (%d %s)\n\n", r.Title, r.PageCount, plural(r.PageCount, "Seite", "Seiten"))
	if msg := strings.TrimSpace(r.Message); msg != "" {
		b.WriteString(msg + "\n\n")
	}
	b.WriteString("Über diesen persönlichen Link sehen Sie das Dokument an und unterschreiben es:\n\n")
	b.WriteString(link + "\n\n")
	fmt.Fprintf(&b, "Der Link gilt bis %s Uhr. Er ist nur für Sie bestimmt: Bitte geben Sie ihn nicht weiter. "+
		"Bevor Sie unterschreiben, senden wir Ihnen einen Bestätigungscode an diese E-Mail-Adresse.\n\n",
		r.ExpiresAt.In(httpx.Berlin).Format("02.01.2006, 15:04"))
	b.WriteString("Mit freundlichen Grüßen\n")
	if sender != "" {
		b.WriteString(sender + "\n")
	}
	if company != "" && company != sender {
		b.WriteString(company + "\n")
	}
	return subject, b.String()
}

// from is who asks for the signature: the acting user's name and the company's, from the
// credential; without them the mailbox's label.
func from(ctx context.Context, mb *ent.Mailbox) (sender, company string) {
	if p, ok := tenancy.PrincipalFrom(ctx); ok {
		sender = strings.TrimSpace(p.UserFirstName + " " + p.UserLastName)
		company = p.CompanyName
	}
	if sender == "" && company == "" {
		sender = mb.Label
	}
	return sender, company
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
